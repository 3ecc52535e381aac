package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// An operator replaces the built-in core area with a standalone
// cairn-plugin-core binary named (and pinned) in the config file: the same
// tools answer, served by the external process, with no host rebuild.
func TestBuiltinAreaReplacedByExternalBinary(t *testing.T) {
	bin := filepath.Join(binDir, "cairn-plugin-core")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/plugins/core/cmd/cairn-plugin-core").CombinedOutput(); err != nil {
		t.Fatalf("build cairn-plugin-core: %v\n%s", err, out)
	}
	if err := writeTrustStore(trustFile, bin); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  core:\n    path: %s\n    sha256: %s\n", bin, sha256File(t, bin)), 0o644)
	s := w.serve("CAIRN_PROJECT=web", "CAIRN_TOOLSETS=core")
	id := taskID(t, s, map[string]any{"title": "served by the external core", "project": "web"})
	if got := structured(t, s.call("task_get", map[string]any{"task_id": id})); got["title"] != "served by the external core" {
		t.Fatalf("task_get through the replacement: %v", got)
	}
	if n := len(s.tools()); n != 15 {
		t.Errorf("%d tools, want the 15 of toolset core (13 core, 2 system)", n)
	}
	s.close()

	code, out, stderr := runCairn(t, w, "", nil, "plugins", "--json")
	if code != 0 {
		t.Fatalf("cairn plugins: %d %s", code, stderr)
	}
	var rep struct {
		Plugins []struct {
			Name, Source, Path string
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("cairn plugins --json: %v\n%s", err, out)
	}
	found := false
	for _, p := range rep.Plugins {
		if p.Name == "core" {
			found = true
			if p.Source != "config" {
				t.Errorf("core plugin source %q, want config (the external binary)", p.Source)
			}
		}
	}
	if !found {
		t.Fatalf("no core plugin in %s", out)
	}
}
