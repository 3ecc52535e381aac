package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runningExe counts the processes running the executable at path.
// A pinned or trusted plugin runs from a sealed in-memory copy of the
// checked bytes (docs/decisions.md D36): its exe is that memfd, and its
// argv[0] names the file it came from.
func runningExe(path string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		target, err := os.Readlink(p)
		if err != nil {
			continue
		}
		if target == path {
			n++
			continue
		}
		if strings.HasPrefix(target, "/memfd:cairn-plugin-") {
			cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 == path {
				n++
			}
		}
	}
	return n
}

// The admin area replaced by a pinned external binary in the config: API
// keys are created through it, `serve --http` authenticates and authorizes
// with it, and a revocation applies at once (docs/decisions.md D22: the host never
// opens an area's store).
func TestHTTPAuthAgainstExternalAdminBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cairn-plugin-admin")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/plugins/admin/cmd/cairn-plugin-admin").CombinedOutput(); err != nil {
		t.Fatalf("build cairn-plugin-admin: %v\n%s", err, out)
	}
	if err := writeTrustStore(trustFile, bin); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  admin:\n    path: %s\n    sha256: %s\n", bin, sha256File(t, bin)), 0o644)
	w.env = append(w.env, "CAIRN_TOOLSETS=core,admin")

	op := w.serve()
	if runningExe(bin) == 0 {
		t.Fatalf("the operator's session does not run the external admin binary %s", bin)
	}
	aliceID, alice := opKey(t, op, "alice", "read", "write")
	_, reader := opKey(t, op, "bob", "read")
	op.close()

	url := serveHTTP(t, w)
	if runningExe(bin) == 0 {
		t.Fatalf("serve --http does not run the external admin binary %s", bin)
	}
	a := newHTTPAgent(t, url, alice)
	got := a.call("task_create", map[string]any{"title": "authenticated by the external admin area", "project": "web"})
	if !got.ok || got.result["created_by"] != "alice" {
		t.Fatalf("task_create with alice's key: %v %v", got, got.result)
	}
	expect(t, "a read-only key creates a task", newHTTPAgent(t, url, reader).call("task_create", map[string]any{"title": "no", "project": "web"}), "write")
	if resp, body := post(t, url, "Bearer cairn_"+strings.Repeat("0", 64)); resp.StatusCode != 401 {
		t.Fatalf("an unknown key: %d %v", resp.StatusCode, body)
	}

	if code, _, stderr := runCairn(t, w, "", nil, "admin", "keys", "revoke", aliceID); code != 0 {
		t.Fatalf("cairn admin keys revoke: %d %s", code, stderr)
	}
	resp, body := post(t, url, "Bearer "+alice)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(fmt.Sprint(body), "revoked") {
		t.Fatalf("alice's key after revocation: %d %v", resp.StatusCode, body)
	}
}
