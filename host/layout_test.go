package host

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// mod is the module path; the layout is of the packages under mod/host.
const mod = "github.com/cairn-mcp/cairn/"

// layers orders the host's packages from the top (what only wires or
// drives) to the bottom (what knows nothing of the rest), by what their
// code imports: a package imports only packages of lower layers
// (docs/decisions.md D34). A call runs transport → session → mcpserver →
// pipeline → supervisor → plugin process; the transports know the host only through their
// Handler, which mcpserver implements, so mcpserver imports them and
// never the other way. A name ending in /... is that folder and all
// below it; the longest name that matches a package places it.
var layers = [][]string{
	{"host/cmd/...", "host/e2e"},
	{"host"},
	{"host/cli"},
	{"host/ui"},
	{"host/mcpserver"},
	{"host/systemtools"},
	{"host/catalog", "host/fleet"},
	{"host/cluster", "host/daemon"},
	{"host/supervisor"},
	{"host/pipeline"},
	{"host/transport/httpserve", "host/transport/stdio"},
	{"host/transport/jsonrpc"},
	{"host/clientsession"},
	{"host/registry", "host/config"},
	{"host/events", "host/trust", "host/cli/toolcmd"},
	{"host/internal/testkit/cmd/..."},
	{"host/internal/..."},
}

// mcpGo are the packages that may speak mcp-go: the MCP glue, the
// transports and the client session.
var mcpGo = []string{"host/mcpserver", "host/clientsession", "host/transport/..."}

// rootFuncs are the only exported functions and methods of the root: it
// wires the parts and drives them.
var rootFuncs = map[string]bool{"New": true, "Host.Start": true, "Host.Reload": true, "Host.Shutdown": true}

type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// hostPackages lists the packages under host once for every test here.
var hostPackages = sync.OnceValues(func() ([]listed, error) {
	out, err := exec.Command("go", "list", "-json", mod+"host/...").Output()
	if err != nil {
		return nil, err
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, mod)
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

func listHost(t *testing.T) []listed {
	t.Helper()
	pkgs, err := hostPackages()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages under host: is the listing right?", len(pkgs))
	}
	return pkgs
}

// matches reports whether pkg is pattern, or below it for a pattern
// ending in /..., and how long the pattern is (0: no match).
func matches(pattern, pkg string) int {
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		if pkg == tree || strings.HasPrefix(pkg, tree+"/") {
			return len(tree)
		}
		return 0
	}
	if pkg == pattern {
		return len(pattern) + 1
	}
	return 0
}

// layerOf is pkg's layer, -1 when no layer names it.
func layerOf(pkg string) int {
	best, at := 0, -1
	for i, l := range layers {
		for _, pattern := range l {
			if n := matches(pattern, pkg); n > best {
				best, at = n, i
			}
		}
	}
	return at
}

func inHost(imp string) (string, bool) {
	rel, ok := strings.CutPrefix(imp, mod)
	if !ok || (rel != "host" && !strings.HasPrefix(rel, "host/")) {
		return "", false
	}
	return rel, true
}

// Every import inside host/ runs down the layers.
func TestTheCallPathRunsOneWay(t *testing.T) {
	for _, p := range listHost(t) {
		from := layerOf(p.ImportPath)
		if from < 0 {
			t.Errorf("%s is in no layer: add it to layers where its imports put it", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			rel, ok := inHost(imp)
			if !ok {
				continue
			}
			if to := layerOf(rel); to >= 0 && to <= from {
				t.Errorf("%s imports %s, which is not below it (layers %d and %d): the imports would turn back on the path of a call", p.ImportPath, rel, from, to)
			}
		}
	}
}

// The transports and the session reach the rest of the host only through
// the Handler it gives them: they import nothing of it but these.
func TestTransportsKnowTheHostOnlyThroughTheirHandler(t *testing.T) {
	allowed := map[string][]string{
		"host/transport/...":     {"host/transport/jsonrpc", "host/clientsession", "host/config", "host/internal/..."},
		"host/transport/jsonrpc": {"host/internal/..."},
		"host/clientsession":     {"host/config", "host/registry"},
	}
	checked := 0
	for _, p := range listHost(t) {
		var rules []string
		best := 0
		for pattern, r := range allowed {
			if n := matches(pattern, p.ImportPath); n > best {
				best, rules = n, r
			}
		}
		if rules == nil {
			continue
		}
		checked++
		for _, imp := range p.Imports {
			rel, ok := inHost(imp)
			if !ok || rel == p.ImportPath {
				continue
			}
			ok = false
			for _, r := range rules {
				ok = ok || matches(r, rel) > 0
			}
			if !ok {
				t.Errorf("%s imports %s: a transport or the session reaches the host only through its Handler (host/mcpserver/transports.go)", p.ImportPath, rel)
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d transport and session packages: is the listing right?", checked)
	}
}

// Only the MCP glue, the transports and the session speak mcp-go.
func TestOnlyTheMCPGlueImportsMCPGo(t *testing.T) {
	for _, p := range listHost(t) {
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, "github.com/mark3labs/mcp-go") {
				continue
			}
			ok := false
			for _, pattern := range mcpGo {
				ok = ok || matches(pattern, p.ImportPath) > 0
			}
			if !ok {
				t.Errorf("%s imports %s: only %s speak mcp-go", p.ImportPath, imp, strings.Join(mcpGo, ", "))
			}
		}
	}
}

// The dashboard and the commands use the host's parts; only cmd/cairn
// (and tests) build a Host.
func TestUIAndCLINeverImportTheRoot(t *testing.T) {
	for _, p := range listHost(t) {
		if p.ImportPath != "host/ui" && p.ImportPath != "host/cli" {
			continue
		}
		for _, dep := range p.Deps {
			if dep == mod+"host" {
				t.Errorf("%s depends on the root package host", p.ImportPath)
			}
		}
	}
}

// A package's name is its folder's (commands are package main), across
// the tree: host/, plugins/, internal/, the SDK module and the examples.
func TestPackageNamesAreTheirFolders(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{.Dir}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	seen := map[string]bool{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("go list printed %q", line)
		}
		path, name, dir := strings.TrimPrefix(f[0], mod), f[1], f[2]
		seen[strings.SplitN(path, "/", 2)[0]] = true
		if name != "main" && name != filepath.Base(dir) {
			t.Errorf("%s: package %s lives in folder %s", path, name, filepath.Base(dir))
		}
	}
	for _, top := range []string{"host", "plugins", "internal", "sdk"} {
		if !seen[top] {
			t.Errorf("go list found no package under %s/: is the listing right?", top)
		}
	}
}

// The root only wires: at most three files, and nothing exported but New
// and the Host's Start, Reload and Shutdown (and the types they take).
func TestTheRootOnlyWires(t *testing.T) {
	for _, p := range listHost(t) {
		if p.ImportPath != "host" {
			continue
		}
		if len(p.GoFiles) > 3 {
			t.Errorf("the root package has %d files (%s), want at most 3", len(p.GoFiles), strings.Join(p.GoFiles, ", "))
		}
		var extra []string
		fset := token.NewFileSet()
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || !fn.Name.IsExported() {
					continue
				}
				name := fn.Name.Name
				if fn.Recv != nil && len(fn.Recv.List) == 1 {
					name = receiverType(fn.Recv.List[0].Type) + "." + name
				}
				if !rootFuncs[name] {
					extra = append(extra, name)
				}
			}
		}
		sort.Strings(extra)
		if len(extra) > 0 {
			t.Errorf("the root exports %s: it only wires (New, Start, Reload, Shutdown); the rest belongs to the part it serves", strings.Join(extra, ", "))
		}
		return
	}
	t.Fatal("go list did not list the root package host")
}

func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}

// A type has one name: host code names another package's type (the
// seam's above all) as that package does, never through an alias of its
// own (docs/decisions.md D34).
func TestNoAliasRenamesAnotherPackagesType(t *testing.T) {
	fset := token.NewFileSet()
	for _, p := range listHost(t) {
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, s := range g.Specs {
					ts := s.(*ast.TypeSpec)
					if sel, ok := ts.Type.(*ast.SelectorExpr); ok && ts.Assign.IsValid() {
						t.Errorf("%s: type %s = %s.%s: name the type as its package does", fset.Position(ts.Pos()), ts.Name.Name, sel.X, sel.Sel.Name)
					}
				}
			}
		}
	}
}
