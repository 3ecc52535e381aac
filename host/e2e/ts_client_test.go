package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsSDKPackage is the official TypeScript SDK the test drives cairn with.
// It speaks protocol revisions up to 2025-11-25; the 2026-07-28 era is
// tested with mcp-go's client (protocol_eras_test.go).
const tsSDKPackage = "@modelcontextprotocol/sdk@1.32.2"

// tsClient is the official TypeScript SDK installed, with Node, for one
// test; it runs the test's scripts from testdata.
type tsClient struct{ node, dir string }

// installTSClient installs tsSDKPackage and the packages named in more,
// skipping the test with -short or without npm.
func installTSClient(t *testing.T, more ...string) *tsClient {
	t.Helper()
	if testing.Short() {
		t.Skip("installs Node and the TypeScript SDK from npm; skipped with -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is absent, so the TypeScript SDK cannot be installed: install npm (Debian: apt-get install npm) to run it")
	}
	tools := t.TempDir()
	install := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--prefix", tools, tsSDKPackage, nodePackage}, more...)...)
	install.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s %s: %v\n%s", tsSDKPackage, nodePackage, err, out)
	}
	return &tsClient{node: filepath.Join(tools, "node_modules", "node", "bin", "node"), dir: tools}
}

// run runs testdata/<script> with args in w's root and returns the JSON
// object it printed.
func (c *tsClient) run(t *testing.T, w *workspace, env []string, script string, args ...string) map[string]any {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	// Beside node_modules, so its imports resolve.
	scriptPath := filepath.Join(c.dir, script)
	if err := os.WriteFile(scriptPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.node, append([]string{scriptPath}, args...)...)
	cmd.Env = append(append([]string{}, w.env...), env...)
	cmd.Dir = w.root
	var stderr syncBuffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	var runErr error
	go func() { out, runErr = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the TypeScript client did not finish\n%s", stderr.String())
	}
	if runErr != nil {
		t.Fatalf("the TypeScript client failed: %v\nstdout: %s\nstderr: %s", runErr, out, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	return got
}

// TestOfficialTypeScriptClient drives cairn with the official TypeScript
// client over stdio (relayed to the shared daemon, and --no-daemon) and
// HTTP: initialize, tools, a call and its resource link, a typed error,
// prompts, completions, a resource subscription notified on a thought
// record, and a resource read.
func TestOfficialTypeScriptClient(t *testing.T) {
	ts := installTSClient(t)
	run := func(t *testing.T, w *workspace, env []string, args ...string) map[string]any {
		return ts.run(t, w, env, "ts-client.mjs", args...)
	}
	check := func(t *testing.T, got map[string]any) {
		t.Helper()
		if got["server"] != "cairn" {
			t.Errorf("server name %v", got["server"])
		}
		for _, c := range []string{"completions", "prompts", "resources", "tools"} {
			if !slices.Contains(anyStrings(got["capabilities"]), c) {
				t.Errorf("capabilities %v lack %s", got["capabilities"], c)
			}
		}
		if tl := anyStrings(got["tools"]); !slices.Contains(tl, "task_create") || !slices.Contains(tl, "sdd_plan") {
			t.Errorf("tools %v", tl)
		}
		created, _ := got["created"].(map[string]any)
		id, _ := created["task_id"].(string)
		uri := "cairn://tasks/" + id
		if id == "" || created["created_by"] != "ts-client" {
			t.Errorf("task_create answered %v; want a task created by ts-client (D4)", created)
		}
		if links := anyStrings(got["links"]); !slices.Equal(links, []string{uri}) {
			t.Errorf("task_create links %v; want [%s]", links, uri)
		}
		if inv, _ := got["invalid"].(map[string]any); inv["isError"] != true || inv["code"] != "ERR_INVALID_INPUT" {
			t.Errorf("an empty title answered %v; want isError with ERR_INVALID_INPUT", inv)
		}
		if !slices.Contains(anyStrings(got["prompts"]), "sdd-plan-phase") {
			t.Errorf("prompts %v", got["prompts"])
		}
		if text, _ := got["promptText"].(string); !strings.Contains(text, `sdd_plan with phase "2"`) {
			t.Errorf("sdd-plan-phase text %q", text)
		}
		if !slices.Contains(anyStrings(got["completion"]), id) {
			t.Errorf("task_id T- completes to %v; want %s among them", got["completion"], id)
		}
		if !slices.Contains(anyStrings(got["updates"]), uri) {
			t.Errorf("no resources/updated for %s after a thought record: %v", uri, got["updates"])
		}
		if read, _ := got["read"].(string); !strings.Contains(read, "From the TypeScript client") {
			t.Errorf("read %s = %q", uri, read)
		}
	}

	t.Run("stdio relay", func(t *testing.T) {
		w := newWorkspace(t)
		check(t, run(t, w, []string{"CAIRN_DAEMON=on"}, "stdio", cairnBin, "serve"))
	})
	t.Run("stdio no daemon", func(t *testing.T) {
		w := newWorkspace(t)
		check(t, run(t, w, nil, "stdio", cairnBin, "serve", "--no-daemon"))
	})
	t.Run("http", func(t *testing.T) {
		w := newWorkspace(t)
		url, _ := startHTTP(t, w, nil, "", "--no-auth")
		check(t, run(t, w, nil, "http", url))
	})
}

// anyStrings turns a decoded JSON array into strings.
func anyStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
