// Package examplecheck finds the exported names of a package that have no
// Example function, so a test can hold a package to the rule that every
// exported func, type and method shows its use in an example go test runs.
// PublicPackages lists the packages of a module the rule covers; this
// package's own test holds the whole SDK module to it.
package examplecheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// PublicPackages returns the directories under the module root that hold
// a public package of that module, root first and then sorted: those
// with a non-test .go file, skipping internal/ and testdata/ trees, the
// folders the go tool ignores (".x", "_x") and nested modules.
func PublicPackages(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root {
			name := d.Name()
			if name == "internal" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				dirs = append(dirs, path)
				break
			}
		}
		return nil
	})
	return dirs, err
}

// Missing parses the Go files of the package in dir, its tests included,
// and returns the exported funcs, types and methods (as "T.M") that no
// Example function documents, sorted.
func Missing(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	// NewFromFiles keeps only the package named by the non-test files;
	// the examples of its _test package are attached to what they name.
	pkg, err := doc.NewFromFiles(fset, files, "example.invalid/"+filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	var missing []string
	funcs := func(list []*doc.Func, recv string) {
		for _, f := range list {
			if ast.IsExported(f.Name) && len(f.Examples) == 0 {
				missing = append(missing, recv+f.Name)
			}
		}
	}
	funcs(pkg.Funcs, "")
	for _, t := range pkg.Types {
		if !ast.IsExported(t.Name) {
			continue
		}
		if len(t.Examples) == 0 {
			missing = append(missing, t.Name)
		}
		funcs(t.Funcs, "")
		funcs(t.Methods, t.Name+".")
	}
	sort.Strings(missing)
	return missing, nil
}
