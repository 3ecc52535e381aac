package engine

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEngineIsPlainGo: the domain package imports nothing of MCP, gRPC or
// the SDK beyond its standard-library-only leaves (typed errors, the
// idempotency mechanism, the plain-file rule, the migration runner, the inventory of held stores,
// the approval rules), so
// it stays usable and testable alone.
func TestEngineIsPlainGo(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, en := range ents {
		name := en.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "github.com/cairn-mcp/cairn/sdk/errs" || p == "github.com/cairn-mcp/cairn/sdk/idempotency" || p == "github.com/cairn-mcp/cairn/sdk/plainfile" || p == "github.com/cairn-mcp/cairn/internal/pgmigrate" ||
				p == "github.com/cairn-mcp/cairn/internal/heldstores" || p == "github.com/cairn-mcp/cairn/internal/approval" {
				continue
			}
			if strings.Contains(p, "mcp") || strings.Contains(p, "grpc") || strings.HasPrefix(p, "google.golang.org/") ||
				strings.HasPrefix(p, "github.com/hashicorp/") {
				t.Errorf("%s imports %s", name, p)
			}
		}
	}
}
