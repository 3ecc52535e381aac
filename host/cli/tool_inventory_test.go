package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// embeddedTools are the embedded copies of area tool snapshots the
// generated command trees are made from. tree builds a copy's commands
// from an inventory (all of its area's snapshots in the test, so that a
// verb calling a tool the copy lacks yet can be built to rewrite it).
var embeddedTools = []struct {
	file string
	data []byte
	area string // plugins/<area>/testdata/toolsnaps holds the snapshots
	tree func(toolcmd.Inventory) *cobra.Command
}{
	{"admin_tools.json", adminToolsJSON, "admin", func(toolcmd.Inventory) *cobra.Command { return newAdmin() }},
	{"core_tools.json", coreToolsJSON, "core", func(inv toolcmd.Inventory) *cobra.Command {
		f := &areaFlags{}
		b := taskBuilder(f)
		b.Tools = inv
		return taskCommand(b, f)
	}},
}

// Each generated command tree is made from a copy of its area's tool
// snapshots, which the area's own test holds to its code; this holds each
// copy to the snapshots of exactly the tools its commands call.
// UPDATE_CLI_TOOLS=1 rewrites the copies.
func TestEmbeddedToolsMatchSnapshots(t *testing.T) {
	t.Parallel()
	for _, e := range embeddedTools {
		t.Run(e.file, func(t *testing.T) {
			t.Parallel()
			snaps := snapshotTools(t, e.area)
			names := generatedTools(e.tree(snaps))
			sort.Strings(names)
			want := make([]toolcmd.Tool, 0, len(names))
			for i, n := range names {
				if i == 0 || n != names[i-1] {
					want = append(want, snaps[n])
				}
			}
			if os.Getenv("UPDATE_CLI_TOOLS") == "1" {
				out, err := json.MarshalIndent(want, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(e.file, append(out, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var got []toolcmd.Tool
			if err := json.Unmarshal(e.data, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s has %d tools, the commands call %d: run UPDATE_CLI_TOOLS=1 go test -run TestEmbeddedToolsMatchSnapshots ./host/cli/", e.file, len(got), len(want))
			}
			for i := range want {
				if !sameTool(got[i], want[i]) {
					t.Errorf("%s: %s differs from plugins/%s/testdata/toolsnaps/%s.snap: run UPDATE_CLI_TOOLS=1 go test -run TestEmbeddedToolsMatchSnapshots ./host/cli/", e.file, got[i].Name, e.area, want[i].Name)
				}
			}
		})
	}
}

// snapshotTools reads the declarations of an area's tools from its
// committed snapshots.
func snapshotTools(t *testing.T, area string) toolcmd.Inventory {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "plugins", area, "testdata", "toolsnaps", "*.snap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tool snapshots of %s: %v", area, err)
	}
	inv := toolcmd.Inventory{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		inv[snap.Name] = toolcmd.Tool{Name: snap.Name, Title: snap.Title, Description: snap.Description, ReadOnly: snap.Annotations.ReadOnly, InputSchema: snap.InputSchema}
	}
	return inv
}

func sameTool(a, b toolcmd.Tool) bool {
	var sa, sb any
	if json.Unmarshal(a.InputSchema, &sa) != nil || json.Unmarshal(b.InputSchema, &sb) != nil {
		return false
	}
	a.InputSchema, b.InputSchema = nil, nil
	return reflect.DeepEqual(a, b) && reflect.DeepEqual(sa, sb)
}
