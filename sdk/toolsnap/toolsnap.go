// Package toolsnap checks a plugin's tool declarations against committed
// snapshots, so a change to a tool's name, description, schemas (the output
// schema as published, docs/decisions.md D37) or annotations shows up in
// review. Set UPDATE_TOOLSNAPS=1 to rewrite them.
package toolsnap

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Check compares every tool of p with dir/<tool>.snap, after checking that
// every declared schema compiles (start-up no longer compiles them). It
// also fails for a tool without a title, description or toolset, and for a
// snapshot file whose tool no longer exists (UPDATE_TOOLSNAPS=1 removes it).
func Check(t *testing.T, p *sdk.Plugin, dir string) {
	t.Helper()
	if err := sdktest.CheckSchemas(p); err != nil {
		t.Fatal(err)
	}
	update := os.Getenv("UPDATE_TOOLSNAPS") == "1"
	declared := map[string]bool{}
	for _, tool := range sdktest.Tools(p) {
		declared[tool.Name+".snap"] = true
		for field, v := range map[string]string{"title": tool.Title, "description": tool.Description, "toolset": tool.Toolset} {
			if v == "" {
				t.Errorf("tool %s has no %s", tool.Name, field)
			}
		}
		// The output schema as tools/list publishes it: the success
		// object or the error envelope (docs/decisions.md D37).
		published, err := schema.Published(tool.OutputSchema)
		if err != nil {
			t.Errorf("tool %s output schema: %v", tool.Name, err)
			continue
		}
		snap := map[string]any{
			"name":         tool.Name,
			"title":        tool.Title,
			"description":  tool.Description,
			"toolset":      tool.Toolset,
			"inputSchema":  json.RawMessage(tool.InputSchema),
			"outputSchema": published,
			"annotations": map[string]bool{
				"readOnlyHint": tool.ReadOnly, "destructiveHint": tool.Destructive,
				"idempotentHint": tool.Idempotent, "openWorldHint": tool.OpenWorld,
			},
		}
		if tool.TaskSupport != "" {
			// Whether a client may run it as a task is part of its
			// contract (docs/decisions.md D39).
			snap["execution"] = map[string]string{"taskSupport": string(tool.TaskSupport)}
		}
		raw, err := json.MarshalIndent(snap, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		// Re-indent the embedded schemas canonically.
		var canon bytes.Buffer
		if err := json.Indent(&canon, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		got := append(canon.Bytes(), '\n')
		path := filepath.Join(dir, tool.Name+".snap")
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("no snapshot for tool %s (%v); run with UPDATE_TOOLSNAPS=1 and review the new file", tool.Name, err)
			continue
		}
		if !bytes.Equal(normalize(t, want), normalize(t, got)) {
			t.Errorf("tool %s differs from %s; if the change is intended, run with UPDATE_TOOLSNAPS=1 and commit the diff\ngot:\n%s", tool.Name, path, got)
		}
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "*.snap"))
	for _, path := range stale {
		if declared[filepath.Base(path)] {
			continue
		}
		if update {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("snapshot %s has no tool; remove it (or run with UPDATE_TOOLSNAPS=1)", path)
	}
}

func normalize(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("snapshot is not JSON: %v", err)
	}
	out, _ := json.Marshal(v)
	return out
}
