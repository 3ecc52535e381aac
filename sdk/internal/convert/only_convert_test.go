package convert

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pluginv1Path is the import path of the generated protocol.
const pluginv1Path = "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"

// TestOnlyConvertBuildsProtocolMessages keeps one converter per type
// (docs/decisions.md D34): outside this package and the generated code, no
// file of the SDK module builds a protocol message, neither with a
// composite literal (&pb.X{...}, pb.X{}, []*pb.X{...}) nor with new(pb.X).
// Both ends, hostconn and the SDK's server, call the functions here. The
// one exception is the call lane's frame codec, which decodes frames into
// empty messages (a decode target, no conversion). Tests are not checked:
// their fakes play the other end of the wire.
func TestOnlyConvertBuildsProtocolMessages(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the SDK module's root is not at %s: %v", root, err)
	}
	var checked int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "internal/convert" {
			return nil
		}
		for _, v := range protocolBuilds(t, path, dir == "internal/lane") {
			t.Errorf("%s:%d builds %s outside sdk/internal/convert: add or call a convert function", filepath.ToSlash(rel), v.line, v.what)
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files: the walk missed the module", checked)
	}
}

// protocolBuild is one place a file builds a protocol message.
type protocolBuild struct {
	line int
	what string
}

// protocolBuilds lists where the file at path builds a protocol message;
// decodeTargets allows empty composite literals (a message to decode a
// frame into). A generated file, or one that does not import the
// protocol, builds none.
func protocolBuilds(t *testing.T, path string, decodeTargets bool) []protocolBuild {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if ast.IsGenerated(f) {
		return nil
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == pluginv1Path {
			name = "pluginv1"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []protocolBuild
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if n.Type == nil || !mentions(n.Type, name) {
				return true
			}
			if decodeTargets && len(n.Elts) == 0 {
				return true
			}
			out = append(out, protocolBuild{fset.Position(n.Pos()).Line, "a " + typeString(n.Type) + " literal"})
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && mentions(n.Args[0], name) {
				out = append(out, protocolBuild{fset.Position(n.Pos()).Line, "new(" + typeString(n.Args[0]) + ")"})
			}
		}
		return true
	})
	return out
}

// mentions reports whether type expression e names a type of package pkg.
func mentions(e ast.Expr, pkg string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == pkg {
				found = true
			}
		}
		return !found
	})
	return found
}

// typeString is a type expression as written, for messages.
func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return typeString(e.X) + "." + e.Sel.Name
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + typeString(e.X)
	case *ast.ArrayType:
		return "[]" + typeString(e.Elt)
	case *ast.MapType:
		return "map[" + typeString(e.Key) + "]" + typeString(e.Value)
	}
	return "?"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
