package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The operator CLI tells the truth: 0 only on success, 2 for a
// command line that cannot run, 1 for a refusal, with a message that says
// what is wrong and what to do.
func TestCLIExitCodes(t *testing.T) {
	w := newWorkspace(t)
	_, keyID := "", ""
	{
		code, out, errOut := runCairn(t, w, "", nil, "admin", "keys", "create", "--name", "ci", "--json")
		if code != 0 {
			t.Fatalf("keys create: %d %s", code, errOut)
		}
		var k struct{ ID string }
		if err := json.Unmarshal([]byte(out), &k); err != nil || k.ID == "" {
			t.Fatalf("keys create output: %v %s", err, out)
		}
		keyID = k.ID
	}
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"admin", "keys", "frobnicate"}, 2, []string{`unknown command "frobnicate"`, "cairn admin keys --help"}},
		{[]string{"admin", "keys", "create", "--name", "x", "--per-minute", "0"}, 2, []string{"--per-minute", "positive", "got 0"}},
		{[]string{"admin", "keys", "create", "--name", "x", "--per-minute", "-5"}, 2, []string{"--per-minute", "got -5"}},
		{[]string{"admin", "keys", "create", "--name", "x", "--per-day", "many"}, 2, []string{"--per-day"}},
		{[]string{"admin", "keys", "create"}, 2, []string{"name"}},
		{[]string{"admin", "keys", "get"}, 2, []string{"accepts 1 arg"}},
		{[]string{"admin", "keys", "update", keyID}, 2, []string{"name something to change"}},
		{[]string{"admin", "keys", "validate", "cairn_0000000000000000000000000000000000000000000000000000000000000000"}, 1, []string{"not valid"}},
		{[]string{"admin", "webhooks", "deliveries", "wh_nope"}, 1, []string{"ERR_NOT_FOUND", "wh_nope"}},
		{[]string{"admin", "invitations", "accept", "inv_garbage"}, 1, []string{"invitation not accepted (invalid)", "pass the token"}},
		{[]string{"admin", "webhooks", "register", "not-a-url"}, 1, []string{`"not-a-url"`, "http or https"}},
		{[]string{"admin", "keys", "update", keyID, "--per-hour", "50"}, 0, nil},
		{[]string{"admin", "keys", "get", keyID}, 0, nil},
		{[]string{"project", "add", "Not-A-Slug"}, 1, []string{"ERR_INVALID_INPUT", "Not-A-Slug"}},
		{[]string{"frobnicate"}, 2, []string{"unknown command"}},
		{[]string{"audit", "verify", "/nonexistent/proof.json"}, 1, []string{"ERR_NOT_FOUND", "no proof bundle at /nonexistent/proof.json", "cairn audit export"}},
		{[]string{"restore", "/nonexistent/backup"}, 1, []string{"ERR_NOT_FOUND", "no backup at /nonexistent/backup", "cairn backup DIR"}},
		{[]string{"plugins", "install", "/nonexistent/cairn-plugin-x"}, 1, []string{"ERR_NOT_FOUND", "no plugin executable at /nonexistent/cairn-plugin-x"}},
		{[]string{"serve", "--config", "/nonexistent/config.yaml"}, 2, []string{"ERR_CONFIG_INVALID", "config file /nonexistent/config.yaml does not exist"}},
	} {
		code, out, errOut := runCairn(t, w, "", nil, c.args...)
		if code != c.code {
			t.Errorf("cairn %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), code, c.code, out, errOut)
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(errOut, s) {
				t.Errorf("cairn %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), s, errOut)
			}
		}
	}
	// keys update changed the one window it named and kept the others.
	_, out, _ := runCairn(t, w, "", nil, "admin", "keys", "get", keyID, "--json")
	var k struct {
		RateLimit map[string]float64 `json:"rate_limit"`
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.RateLimit["per_hour"] != 50 || k.RateLimit["per_minute"] != 100 {
		t.Fatalf("keys update --per-hour 50: %v %s", err, out)
	}

	// The environment is told once, at the top level.
	_, top, _ := runCairn(t, w, "", nil, "--help")
	_, sub, _ := runCairn(t, w, "", nil, "admin", "keys", "create", "--help")
	if !strings.Contains(top, "CAIRN_DATA_DIR") || strings.Contains(sub, "CAIRN_DATA_DIR") || !strings.Contains(sub, "--per-minute") {
		t.Fatalf("help: top has env %v, subcommand has env %v", strings.Contains(top, "CAIRN_DATA_DIR"), strings.Contains(sub, "CAIRN_DATA_DIR"))
	}
}

// A read-only verb where there is no data dir says so instead of creating
// an empty store there.
func TestCLIReadOutsideWorkspace(t *testing.T) {
	w := newWorkspace(t)
	empty := t.TempDir()
	for _, args := range [][]string{{"project", "list"}, {"admin", "keys", "list"}, {"admin", "webhooks", "list"}} {
		cmd := exec.Command(cairnBin, args...)
		cmd.Env, cmd.Dir = append([]string{}, w.env...), empty
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "no cairn data dir") || !strings.Contains(stderr.String(), "CAIRN_DATA_DIR") {
			t.Fatalf("cairn %v outside a workspace: %v\n%s", args, err, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(empty, ".cairn")); !os.IsNotExist(err) {
			t.Fatalf("cairn %v created %s/.cairn", args, empty)
		}
	}
}

// While a daemon holds the core store, `cairn project list` and `cairn
// audit export` answer through it.
func TestCLIProjectListAndAuditExportWhileDaemonRuns(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	if code, out, errOut := runCairn(t, w, "", daemonEnv, "project", "add", "mobile"); code != 0 || !strings.Contains(out, "through the running daemon") {
		t.Fatalf("project add: %d %s %s", code, out, errOut)
	}
	code, out, errOut := runCairn(t, w, "", daemonEnv, "project", "list", "--json")
	if code != 0 || !strings.Contains(out, `"mobile"`) || !strings.Contains(out, `"web"`) {
		t.Fatalf("project list while the daemon runs: %d %s %s", code, out, errOut)
	}
	// Registering is the operator's: sessions do not reach the internal
	// tool the CLI calls.
	if res, err := s.callCtx(context.Background(), "project_register", map[string]any{"slug": "agent-made"}); err == nil && !res.IsError {
		t.Fatalf("a session called the internal project_register: %v", structured(t, res))
	}
	id, err := callOK(s, "task_create", map[string]any{"title": "export me", "project": "mobile"})
	if err != nil {
		t.Fatal(err)
	}
	task := id["task_id"].(string)
	if _, err := callOK(s, "thought_record", map[string]any{"task_id": task, "type": "decision", "content": "ship it"}); err != nil {
		t.Fatal(err)
	}
	sess, err := callOK(s, "audit_session_start", map[string]any{"task_id": task, "auditor_id": "reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	sid := sess["session_id"].(string)
	if _, err := callOK(s, "merkle_finalize", map[string]any{"session_id": sid}); err != nil {
		t.Fatal(err)
	}
	proof := filepath.Join(w.root, "proof.json")
	if code, _, errOut := runCairn(t, w, "", daemonEnv, "audit", "export", sid, "-o", proof); code != 0 {
		t.Fatalf("audit export while the daemon runs: %d %s", code, errOut)
	}
	if code, out, errOut := runCairn(t, w, "", daemonEnv, "audit", "verify", proof); code != 0 || !strings.HasPrefix(out, "OK") {
		t.Fatalf("audit verify: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := runCairn(t, w, "", daemonEnv, "admin", "webhooks", "deliveries", "wh_nope"); code != 1 || !strings.Contains(errOut, "wh_nope") {
		t.Fatalf("a refusal through the daemon: %d %s", code, errOut)
	}
}

// The admin area replaced by an external binary named in the config file:
// the CLI creates and revokes keys in that binary's store, and HTTP
// authentication, which asks the same binary, rejects the revoked key.
func TestCLIAgainstExternalAdminBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cairn-plugin-admin")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/plugins/admin/cmd/cairn-plugin-admin").CombinedOutput(); err != nil {
		t.Fatalf("build cairn-plugin-admin: %v\n%s", err, out)
	}
	w := newWorkspace(t)
	env, _ := ownTrustStore(t, bin)
	w.env = append(w.env, env)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  admin:\n    path: %s\n    sha256: %s\n", bin, sha256File(t, bin)), 0o644)
	id, key := createKey(t, w, "--name", "external")
	url := serveHTTP(t, w)
	if resp, _ := post(t, url, "Bearer "+key); resp.StatusCode != 200 {
		t.Fatalf("key created by the CLI in the external area: %d", resp.StatusCode)
	}
	// The command's host logs which binary served the area.
	if code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=info"}, "admin", "keys", "revoke", id); code != 0 || !strings.Contains(errOut, bin) {
		t.Fatalf("revoke through the external binary: %d %s", code, errOut)
	}
	if resp, body := post(t, url, "Bearer "+key); resp.StatusCode != 401 {
		t.Fatalf("revoked key: %d %v", resp.StatusCode, body)
	}
}
