package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadOnlyModeListsAndAllowsOnlyReadOnlyTools(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve("CAIRN_MODE=READONLY")
	tools := s.tools()
	if _, ok := tools["testkit_echo"]; !ok {
		t.Fatalf("read-only tool missing in READONLY mode: %v", keys(tools))
	}
	for name, tool := range tools {
		if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
			t.Errorf("READONLY mode lists %s, which is not read-only", name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.callCtx(ctx, "testkit_sleep", map[string]any{"ms": 1})
	if err != nil {
		t.Fatalf("a write tool in READONLY mode: %v, want a typed 403 result", err)
	}
	if e, _ := structured(t, res)["error"].(map[string]any); !res.IsError || e["code"] != "ERR_FORBIDDEN" || metaStatus(res) != 403 {
		t.Errorf("READONLY mode answered testkit_sleep with %v (status %v), want 403 ERR_FORBIDDEN", structured(t, res), metaStatus(res))
	} else if d, _ := e["details"].(map[string]any); d["required"] != "mode FULL" {
		t.Errorf("details.required = %v, want the mode", d["required"])
	}
	if h := structured(t, s.call("server_health", map[string]any{})); h["mode"] != "READONLY" {
		t.Errorf("mode = %v", h["mode"])
	}
}

func TestMinimalModeHasOnlyHostTools(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve("CAIRN_MODE=minimal")
	tools := s.tools()
	if len(tools) != 2 || tools["server_ping"].Name == "" || tools["server_health"].Name == "" {
		t.Fatalf("MINIMAL tools = %v, want server_ping and server_health", keys(tools))
	}
	h := structured(t, s.call("server_health", map[string]any{}))
	if h["mode"] != "MINIMAL" || len(h["plugins"].([]any)) != 0 {
		t.Errorf("health = %v", h)
	}
}

func TestTestModeUsesATemporaryDataDir(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve("CAIRN_MODE=TEST")
	cfg := structured(t, s.call("testkit_config", map[string]any{}))
	dir, _ := cfg["data_dir"].(string)
	if dir == "" || strings.HasPrefix(dir, w.root) {
		t.Fatalf("TEST mode data dir %q should be a temporary directory outside the workspace (testkit_config: %v)", dir, cfg)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("TEST data dir missing while running: %v", err)
	}
	if cfg["mode"] != "TEST" {
		t.Errorf("plugin sees mode %v", cfg["mode"])
	}
	s.close()
	eventually(t, patience, "the TEST data dir to be removed at exit", func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
}

func TestBadSettingsExitWithStatus2(t *testing.T) {
	// The operator's own mistakes that make serving impossible stop a start.
	cases := []struct {
		env  []string
		code string
	}{
		{[]string{"CAIRN_LOG_LEVEL=loud"}, "ERR_CONFIG_INVALID"},
		{[]string{"CAIRN_ROOT=/no/such/dir"}, "ERR_CONFIG_INVALID"},
		{[]string{"CAIRN_CONFIG=/no/such/config.yaml"}, "ERR_CONFIG_INVALID"},
	}
	for _, c := range cases {
		t.Run(c.code+" "+c.env[0], func(t *testing.T) {
			w := newWorkspace(t)
			code, stdout, stderr := runCairn(t, w, "", c.env, "serve")
			if code != 2 || !strings.Contains(stderr, c.code) {
				t.Errorf("exit %d stderr %q, want 2 and %s", code, stderr, c.code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

// TestBadSessionSettingsAreWarnings: a session's own settings never stop
// it (docs/decisions.md D21); each mistake is a warning on stderr, and the
// server serves what is valid until its client leaves.
func TestBadSessionSettingsAreWarnings(t *testing.T) {
	cases := []struct {
		env  []string
		warn string
	}{
		{[]string{"CAIRN_MODE=TURBO"}, `CAIRN_MODE "TURBO" is not a mode`},
		{[]string{"CAIRN_TOOLSETS=core,Bad Name"}, `CAIRN_TOOLSETS: "Bad Name" ignored`},
		{[]string{"CAIRN_TOOLSETS=nosuchtoolset"}, "CAIRN_TOOLSETS names nosuchtoolset, which no loaded plugin provides"},
		{[]string{"CAIRN_PROJECT=Not A Slug"}, `CAIRN_PROJECT "Not A Slug" ignored`},
	}
	for _, c := range cases {
		t.Run(c.env[0], func(t *testing.T) {
			w := newWorkspace(t)
			code, stdout, stderr := runCairn(t, w, "", c.env, "serve")
			if code != 0 || !strings.Contains(stderr, c.warn) {
				t.Errorf("exit %d stderr %q, want 0 and a warning with %q", code, stderr, c.warn)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestToolsetsFilterTools(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("testkit", testkitBin)
	s := w.serve("CAIRN_TOOLSETS=-testkit")
	if _, ok := s.tools()["testkit_echo"]; ok {
		t.Errorf("CAIRN_TOOLSETS=-testkit still lists testkit tools")
	}
	w2 := newWorkspace(t)
	w2.addPlugin("testkit", testkitBin)
	s2 := w2.serve("CAIRN_TOOLSETS=testkit")
	if _, ok := s2.tools()["testkit_echo"]; !ok {
		t.Errorf("CAIRN_TOOLSETS=testkit does not list testkit tools")
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestSHA256Pin(t *testing.T) {
	good := sha256File(t, testkitBin)
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  pinned:
    path: %s
    sha256: %s
    env: {TESTKIT_NAME: pinned}
  tampered:
    path: %s
    sha256: %s
    env: {TESTKIT_NAME: tampered}
`, testkitBin, good, testkitBin, strings.Repeat("0", 64)), 0o644)
	s := w.serve()
	tools := s.tools()
	if _, ok := tools["pinned_echo"]; !ok {
		t.Errorf("correctly pinned plugin not loaded")
	}
	if _, ok := tools["tampered_echo"]; ok {
		t.Errorf("plugin with a wrong pin was started")
	}
	h := structured(t, s.call("server_health", map[string]any{}))
	if !strings.Contains(fmt.Sprint(h["problems"]), "sha256") {
		t.Errorf("pin mismatch not reported: %v", h["problems"])
	}

	// A required plugin with a wrong pin stops the host.
	w2 := newWorkspace(t)
	w2.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  tampered:\n    path: %s\n    sha256: %s\n    required: true\n", testkitBin, strings.Repeat("0", 64)), 0o644)
	code, _, stderr := runCairn(t, w2, "", nil, "serve")
	if code != 2 || !strings.Contains(stderr, "ERR_INIT_FAILED") || !strings.Contains(stderr, "sha256") {
		t.Errorf("required plugin with wrong pin: exit %d\n%s", code, stderr)
	}
}

func TestSIGHUPReloadsChangedPlugins(t *testing.T) {
	w := newWorkspace(t)
	cfg := func(extra string) {
		w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  keep:
    path: %s
    env: {TESTKIT_NAME: keep}
  change:
    path: %s
    env: {TESTKIT_NAME: change}
    settings: {color: %s}
%s`, testkitBin, testkitBin, map[bool]string{true: "blue", false: "red"}[extra != ""], extra), 0o644)
	}
	cfg("")
	s := w.serve()
	keepPID := structured(t, s.call("keep_pid", map[string]any{}))["pid"].(float64)
	changePID := structured(t, s.call("change_pid", map[string]any{}))["pid"].(float64)
	if got := structured(t, s.call("change_config", map[string]any{}))["settings"].(map[string]any)["color"]; got != "red" {
		t.Fatalf("settings not passed: %v", got)
	}
	before := s.notifications("notifications/tools/list_changed")
	cfg(fmt.Sprintf("  added:\n    path: %s\n    env: {TESTKIT_NAME: added}\n", testkitBin))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, patience, "added_echo after SIGHUP", func() bool {
		_, ok := s.tools()["added_echo"]
		return ok
	})
	// The notification is written beside the list's answers, not before
	// them: under load the new tool can be listed first.
	eventually(t, patience, "tools/list_changed after reload", func() bool {
		return s.notifications("notifications/tools/list_changed") > before
	})
	if got := structured(t, s.call("keep_pid", map[string]any{}))["pid"].(float64); got != keepPID {
		t.Errorf("unchanged plugin was restarted (%v -> %v)", keepPID, got)
	}
	if got := structured(t, s.call("change_pid", map[string]any{}))["pid"].(float64); got == changePID {
		t.Errorf("plugin whose settings changed was not restarted")
	}
	if got := structured(t, s.call("change_config", map[string]any{}))["settings"].(map[string]any)["color"]; got != "blue" {
		t.Errorf("new settings not applied: %v", got)
	}

	// Removing a plugin from the config stops it.
	cfg("")
	_ = s.cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, patience, "added_echo to disappear after SIGHUP", func() bool {
		_, ok := s.tools()["added_echo"]
		return !ok
	})
}

func TestCLIVersionToolsPlugins(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("semver", semverBin)
	code, out, errOut := runCairn(t, w, "", nil, "version")
	if code != 0 || !strings.HasPrefix(out, "cairn ") {
		t.Errorf("version: %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCairn(t, w, "", nil, "tools")
	if code != 0 || !strings.Contains(out, "semver_compare") || !strings.Contains(out, "server_ping") {
		t.Errorf("tools: %d\n%s\n%s", code, out, errOut)
	}
	md := w.root + "/tools.md"
	code, _, errOut = runCairn(t, w, "", nil, "tools", "--markdown", "--out", md)
	if code != 0 {
		t.Fatalf("tools --markdown: %d %s", code, errOut)
	}
	b, _ := os.ReadFile(md)
	for _, want := range []string{"# cairn tool reference", "### `semver_bump`", "| `part` | string | yes |", "one of major, minor, patch"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("tools.md lacks %q", want)
		}
	}
	code, out, errOut = runCairn(t, w, "", nil, "plugins")
	if code != 0 || !strings.Contains(out, "semver") || !strings.Contains(out, "1.0.0") || !strings.Contains(out, "running") {
		t.Errorf("plugins: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCairn(t, w, "", nil, "serve", "--http", "0.0.0.0:9", "--no-auth")
	if code != 2 || !strings.Contains(errOut, "loopback") {
		t.Errorf("non-loopback --http: %d %s", code, errOut)
	}
}

func TestExamplePluginEndToEnd(t *testing.T) {
	w := newWorkspace(t)
	w.addPlugin("semver", semverBin)
	s := w.serve()
	got := structured(t, s.call("semver_bump", map[string]any{"version": "1.4.2", "part": "minor"}))
	if got["version"] != "1.5.0" {
		t.Errorf("semver_bump = %v", got)
	}
	res := s.call("semver_compare", map[string]any{"a": "one", "b": "1.0.0"})
	e := structured(t, res)["error"].(map[string]any)
	if !res.IsError || e["details"].(map[string]any)["field"] != "a" {
		t.Errorf("semver_compare error = %v", e)
	}
}
