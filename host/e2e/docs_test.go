package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// docs/tools.md is generated from the registered schemas; this keeps the
// committed reference in step with the code.
func TestToolReferenceIsCurrent(t *testing.T) {
	w := newWorkspace(t)
	out := filepath.Join(w.root, "tools.md")
	if code, _, stderr := runCairn(t, w, "", nil, "tools", "--markdown", "--out", out); code != 0 {
		t.Fatalf("cairn tools --markdown: %d\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("docs/tools.md is stale: run `make tools-doc` and commit the result")
	}
}
