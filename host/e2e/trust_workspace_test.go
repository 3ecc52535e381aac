package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// markerPlugin writes, into the workspace plugin dir, a plugin that
// appends a line to marker whenever it is run, then serves the testkit
// under the name "marker". It is a copy, not a link, so that editing it
// changes its sha256.
func markerPlugin(t *testing.T, w *workspace, marker, variant string) string {
	t.Helper()
	script := fmt.Sprintf("#!/bin/sh\n# %s\necho ran >> %q\nTESTKIT_NAME=marker exec %q\n", variant, marker, testkitBin)
	return w.writeFile(".cairn/plugins/cairn-plugin-marker", script, 0o755)
}

func ranTimes(marker string) int {
	b, err := os.ReadFile(marker)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "ran\n")
}

type pluginsJSON struct {
	Plugins []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	} `json:"plugins"`
	Untrusted []struct {
		Name    string `json:"name"`
		Path    string `json:"path"`
		SHA256  string `json:"sha256"`
		Reason  string `json:"reason"`
		Command string `json:"trust_command"`
	} `json:"untrusted"`
}

func listPlugins(t *testing.T, w *workspace, env ...string) pluginsJSON {
	t.Helper()
	code, out, errOut := runCairn(t, w, "", env, "plugins", "--json")
	if code != 0 {
		t.Fatalf("cairn plugins --json: exit %d\n%s", code, errOut)
	}
	var p pluginsJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("cairn plugins --json: %v\n%s", err, out)
	}
	return p
}

// TestTrustWorkspacePluginDir: a cairn-plugin-* dropped in the workspace
// does not run until the operator trusts it, runs once trusted, and is
// untrusted again as soon as the binary changes (docs/decisions.md D23).
func TestTrustWorkspacePluginDir(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, storePath := ownTrustStore(t)
	marker := filepath.Join(t.TempDir(), "marker")
	path := markerPlugin(t, w, marker, "v1")

	// Untrusted: serve does not run it, and lists it with the command.
	s := w.serve(trustEnv)
	if _, ok := s.tools()["marker_echo"]; ok {
		t.Fatal("an untrusted workspace plugin's tools are listed")
	}
	s.close()
	if n := ranTimes(marker); n != 0 {
		t.Fatalf("the untrusted workspace plugin ran %d times", n)
	}
	code, out, errOut := runCairn(t, w, "", []string{trustEnv}, "plugins")
	if code != 0 || !strings.Contains(out, "untrusted") || !strings.Contains(out, "cairn plugins trust "+path) {
		t.Fatalf("cairn plugins: exit %d\n%s\n%s", code, out, errOut)
	}
	list := listPlugins(t, w, trustEnv)
	if len(list.Untrusted) != 1 || list.Untrusted[0].Name != "marker" || list.Untrusted[0].Command != "cairn plugins trust "+path || len(list.Untrusted[0].SHA256) != 64 {
		t.Fatalf("untrusted = %+v", list.Untrusted)
	}
	if n := ranTimes(marker); n != 0 {
		t.Fatalf("cairn plugins ran the untrusted plugin %d times", n)
	}

	// Trusted by name: it runs.
	code, out, errOut = runCairn(t, w, "", []string{trustEnv}, "plugins", "trust", "marker")
	if code != 0 || !strings.Contains(out, "trusted marker") {
		t.Fatalf("cairn plugins trust marker: exit %d\n%s\n%s", code, out, errOut)
	}
	if st, err := os.Stat(storePath); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("trust store: %v %v", st, err)
	}
	s = w.serve(trustEnv)
	if res := s.call("marker_echo", map[string]any{"message": "hi"}); res.IsError {
		t.Fatalf("marker_echo after trust: %v", structured(t, res))
	}
	s.close()
	if ranTimes(marker) == 0 {
		t.Fatal("the trusted plugin did not run")
	}
	if list := listPlugins(t, w, trustEnv); len(list.Untrusted) != 0 {
		t.Fatalf("still untrusted after trust: %+v", list.Untrusted)
	}

	// The binary changes: untrusted again, and the reason says so.
	markerPlugin(t, w, marker, "v2")
	before := ranTimes(marker)
	s = w.serve(trustEnv)
	if _, ok := s.tools()["marker_echo"]; ok {
		t.Fatal("a changed binary still runs")
	}
	s.close()
	if ranTimes(marker) != before {
		t.Fatal("the changed binary ran")
	}
	list = listPlugins(t, w, trustEnv)
	if len(list.Untrusted) != 1 || !strings.Contains(list.Untrusted[0].Reason, "changed since it was trusted") {
		t.Fatalf("untrusted after change = %+v", list.Untrusted)
	}

	// Trust by path, then untrust by name.
	if code, _, errOut := runCairn(t, w, "", []string{trustEnv}, "plugins", "trust", path); code != 0 {
		t.Fatalf("trust by path: %s", errOut)
	}
	if list := listPlugins(t, w, trustEnv); len(list.Untrusted) != 0 {
		t.Fatalf("untrusted after trust by path: %+v", list.Untrusted)
	}
	code, out, errOut = runCairn(t, w, "", []string{trustEnv}, "plugins", "untrust", "marker")
	if code != 0 || !strings.Contains(out, "untrusted marker") {
		t.Fatalf("untrust: exit %d\n%s\n%s", code, out, errOut)
	}
	if list := listPlugins(t, w, trustEnv); len(list.Untrusted) != 1 {
		t.Fatalf("untrust did not take: %+v", list.Untrusted)
	}
}

// TestTrustCommandErrors: the trust verbs refuse what they cannot act on.
func TestTrustCommandErrors(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown name", []string{"plugins", "trust", "ghost"}, `ERR_NOT_FOUND: no plugin named "ghost"`},
		{"built-in area", []string{"plugins", "trust", "core"}, "is a built-in area"},
		{"missing path", []string{"plugins", "trust", "./nope/cairn-plugin-x"}, "ERR_NOT_FOUND"},
		{"not executable", []string{"plugins", "trust", w.writeFile("notes.txt", "x", 0o644)}, "is not an executable file"},
		{"no argument", []string{"plugins", "trust"}, "accepts 1 arg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCairn(t, w, "", []string{trustEnv}, c.args...)
			if code == 0 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q; want failure containing %q", code, errOut, c.want)
			}
		})
	}
}

// TestTrustWorkspaceConfigPath: a plugin path in the workspace config file
// needs trust; the same plugin in an operator config outside the
// workspace (CAIRN_CONFIG) does not.
func TestTrustWorkspaceConfigPath(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t)
	marker := filepath.Join(t.TempDir(), "marker")
	bin := filepath.Join(t.TempDir(), "cairn-plugin-cfgkit")
	if err := os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\necho ran >> %q\nTESTKIT_NAME=cfgkit exec %q\n", marker, testkitBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("plugins:\n  cfgkit:\n    path: %s\n", bin)
	w.writeFile(".cairn/config.yaml", cfg, 0o644)
	s := w.serve(trustEnv)
	if _, ok := s.tools()["cfgkit_echo"]; ok {
		t.Fatal("a plugin path from the workspace config ran untrusted")
	}
	s.close()
	if ranTimes(marker) != 0 {
		t.Fatal("the workspace config's plugin ran")
	}
	list := listPlugins(t, w, trustEnv)
	if len(list.Untrusted) != 1 || list.Untrusted[0].Name != "cfgkit" || list.Untrusted[0].Path != bin {
		t.Fatalf("untrusted = %+v", list.Untrusted)
	}

	// The operator's own config file, outside the workspace.
	ops := filepath.Join(t.TempDir(), "ops.yaml")
	if err := os.WriteFile(ops, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s = w.serve(trustEnv, "CAIRN_CONFIG="+ops)
	if res := s.call("cfgkit_echo", map[string]any{"message": "hi"}); res.IsError {
		t.Fatalf("operator-configured plugin: %v", structured(t, res))
	}
	s.close()
	if ranTimes(marker) == 0 {
		t.Fatal("the operator-configured plugin did not run")
	}
}

// TestTrustedPluginEnvironment: a trusted third-party plugin gets a minimal
// environment plus its config env, never the host's secrets.
func TestTrustedPluginEnvironment(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, testkitBin)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  envkit:\n    path: %s\n    env: {TESTKIT_NAME: envkit, GIVEN: by-config}\n", testkitBin), 0o644)
	s := w.serve(trustEnv, "ANTHROPIC_API_KEY=sk-ant-e2e-secret", "AWS_SECRET_ACCESS_KEY=aws-e2e-secret", "LANG=C.UTF-8")
	res := s.call("envkit_env", map[string]any{"names": []string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GIVEN", "PATH", "HOME", "LANG", "CAIRN_ROOT"}})
	if res.IsError {
		t.Fatalf("envkit_env: %v", structured(t, res))
	}
	env := structured(t, res)["env"].(map[string]any)
	for _, secret := range []string{"ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := env[secret]; ok {
			t.Errorf("%s reached a third-party plugin", secret)
		}
	}
	for k, want := range map[string]string{"GIVEN": "by-config", "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"), "LANG": "C.UTF-8", "CAIRN_ROOT": w.root} {
		if env[k] != want {
			t.Errorf("%s = %v, want %q", k, env[k], want)
		}
	}
}

// TestUntrustedAreaReplacementStopsStart: a workspace config that replaces
// a built-in area with an untrusted binary stops the start with the
// command that trusts it, instead of leaving the area silently missing.
func TestUntrustedAreaReplacementStopsStart(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t)
	bin := filepath.Join(t.TempDir(), "cairn-plugin-core")
	if err := os.WriteFile(bin, []byte(fmt.Sprintf("#!/bin/sh\nexec %q\n", testkitBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  core:\n    path: %s\n    env: {TESTKIT_NAME: core}\n", bin), 0o644)
	code, _, errOut := runCairn(t, w, "", []string{trustEnv}, "tools")
	if code != 2 || !strings.Contains(errOut, "ERR_INIT_FAILED") || !strings.Contains(errOut, "cairn plugins trust "+bin) {
		t.Fatalf("start with an untrusted area replacement: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := runCairn(t, w, "", []string{trustEnv}, "plugins", "trust", "core"); code != 0 || !strings.Contains(out, bin) {
		t.Fatalf("trust core: exit %d\n%s\n%s", code, out, errOut)
	}
	s := w.serve(trustEnv)
	if res := s.call("core_echo", map[string]any{"message": "replaced"}); res.IsError {
		t.Fatalf("the trusted replacement does not answer: %v", structured(t, res))
	}
}

// TestWorkspaceConfigCannotSetBuiltinEnv: a built-in area keeps the host's
// environment, so a workspace config may not add to it (LD_PRELOAD, a base
// URL for the API key); the operator's own config may. GODEBUG=inittrace=1
// makes the change visible: the area's Go runtime then writes "ms clock"
// lines to stderr, which the host logs.
func TestWorkspaceConfigCannotSetBuiltinEnv(t *testing.T) {
	cfg := "plugins:\n  core:\n    env: {GODEBUG: inittrace=1}\n"

	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t)
	w.writeFile(".cairn/config.yaml", cfg, 0o644)
	s := w.serve(trustEnv)
	s.call("server_ping", map[string]any{})
	s.close()
	if errOut := s.stderr.String(); strings.Contains(errOut, "ms clock") || !strings.Contains(errOut, "ignoring env for a built-in area") {
		t.Fatalf("workspace config env reached the built-in area, or was dropped silently:\n%s", errOut)
	}

	ops := filepath.Join(t.TempDir(), "ops.yaml")
	if err := os.WriteFile(ops, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	w2 := newWorkspace(t)
	s = w2.serve(trustEnv, "CAIRN_CONFIG="+ops)
	s.call("server_ping", map[string]any{})
	s.close()
	if errOut := s.stderr.String(); !strings.Contains(errOut, "ms clock") {
		t.Fatalf("the operator's config env did not reach the built-in area:\n%s", errOut)
	}
}
