package toolsnap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// recorder keeps what CheckDerived reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

type wordIn struct {
	Word string `json:"word" jsonschema:"minLength=1"`
}

func wordPlugin() *sdk.Plugin {
	p := sdk.New("words", "0.1.0")
	sdk.AddTool(p, sdk.Tool[wordIn, wordIn]{
		Name: "word", Title: "Word", Description: "Answers its word.",
		Handler: func(_ context.Context, in wordIn) (wordIn, error) { return in, nil },
	})
	return p
}

func TestCheckDerivedCatchesAStaleTable(t *testing.T) {
	p := wordPlugin()
	fresh := sdktest.DerivedSchemas(p)
	for name, table := range map[string]map[string]sdk.ToolSchemas{
		"changed":      {"word": {Input: `{"type":"object"}`, Output: fresh["word"].Output}},
		"missing":      {},
		"no-such-tool": {"word": fresh["word"], "gone": fresh["word"]},
	} {
		r := &recorder{TB: t}
		CheckDerived(r, p, table, "schemas_derived.go", "derivedSchemas")
		if len(r.errors) != 1 || !strings.Contains(r.errors[0], "UPDATE_TOOLSNAPS=1") {
			t.Errorf("%s: want one error naming UPDATE_TOOLSNAPS=1, got %q", name, r.errors)
		}
	}
	r := &recorder{TB: t}
	CheckDerived(r, p, fresh, "schemas_derived.go", "derivedSchemas")
	if len(r.errors) != 0 {
		t.Fatalf("a current table was refused: %q", r.errors)
	}
}

func TestCheckDerivedWritesTheTable(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.go"), []byte("package words\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("UPDATE_TOOLSNAPS", "1")
	file := filepath.Join(dir, "schemas_derived.go")
	CheckDerived(t, wordPlugin(), nil, file, "derivedSchemas")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"// Code generated", "package words", "var derivedSchemas = map[string]sdk.ToolSchemas{", `"word": {`, `\"minLength\":1`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated file lacks %q:\n%s", want, src)
		}
	}
}
