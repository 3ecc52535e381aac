package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// inspectorPackage is MCP Inspector, whose CLI verifies a server's skills
// extension (SEP-2640): `--method skills/list --verify` checks each entry's
// conformance, reads every listed file with resources/read, and compares
// its digest, size and frontmatter with the entry. It needs Node 22, which
// comes from nodePackage beside it, never onto the system.
const inspectorPackage = "@modelcontextprotocol/inspector@2.12.0"

// TestInspectorVerifiesSkills runs Inspector's `skills/list --verify`
// against `cairn serve` over stdio, in this process and relayed to the
// shared daemon, on a workspace holding the canonical skills `cairn init`
// installs: every skill must come out verified (docs/decisions.md D14).
func TestInspectorVerifiesSkills(t *testing.T) {
	if testing.Short() {
		t.Skip("installs Node and MCP Inspector from npm; skipped with -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is absent, so MCP Inspector cannot be installed: install npm (Debian: apt-get install npm) to run it")
	}
	tools := t.TempDir()
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", tools, inspectorPackage, nodePackage)
	install.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s %s: %v\n%s", inspectorPackage, nodePackage, err, out)
	}
	nodeBin := filepath.Join(tools, "node_modules", "node", "bin")
	cli := filepath.Join(tools, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")

	for name, env := range map[string][]string{"no daemon": nil, "relay": sharedEnv} {
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			if code, _, errOut := runCairn(t, w, "", nil, "init"); code != 0 {
				t.Fatalf("cairn init: exit %d\n%s", code, errOut)
			}
			skills, err := filepath.Glob(filepath.Join(w.root, ".agents", "skills", "cairn-*", "SKILL.md"))
			if err != nil || len(skills) == 0 {
				t.Fatalf("cairn init installed no skills: %v", err)
			}
			// The Inspector starts the server with only the variables it
			// is given.
			args := []string{cli, "--cli", "--cwd", w.root, "--method", "skills/list", "--verify"}
			for _, kv := range append(append([]string{}, w.env...), env...) {
				args = append(args, "-e", kv)
			}
			args = append(args, cairnBin, "serve")
			cmd := exec.Command(filepath.Join(nodeBin, "node"), args...)
			cmd.Env = append(os.Environ(), "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
			var stdout, stderr syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(120 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("the Inspector did not finish\nstderr:\n%s", stderr.String())
			}
			if err != nil {
				t.Fatalf("skills/list --verify failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			verified := 0
			for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var report struct {
					URI     string `json:"uri"`
					Outcome string `json:"outcome"`
					OK      bool   `json:"ok"`
				}
				if err := json.Unmarshal([]byte(line), &report); err != nil {
					t.Fatalf("report line %q: %v", line, err)
				}
				if !report.OK || report.Outcome != "verified" {
					t.Errorf("%s: %s", report.URI, line)
				}
				verified++
			}
			if verified != len(skills) {
				t.Errorf("the Inspector verified %d skills; cairn init installed %d\nstderr:\n%s", verified, len(skills), stderr.String())
			}
			if !strings.Contains(stderr.String(), "no conformance errors") {
				t.Errorf("no verdict on stderr:\n%s", stderr.String())
			}
		})
	}
}
