package examplecheck

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is the SDK module's root, seen from this package's folder.
const moduleRoot = "../.."

// Every exported func, type and method of every public package of the SDK
// module has an Example (example_test.go files), which go test compiles
// and runs: a plugin author learns the SDK from them. A new public
// package is held to the rule without being listed anywhere.
func TestEveryExportedNameHasAnExample(t *testing.T) {
	dirs, err := PublicPackages(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		missing, err := Missing(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		rel, err := filepath.Rel(moduleRoot, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range missing {
			t.Errorf("sdk/%s: %s has no Example function; add one to an example_test.go", filepath.ToSlash(rel), name)
		}
	}
}

// The walk finds the module's public packages, the root among them, and
// none of its internal ones or test fixtures.
func TestPublicPackagesSkipsInternalAndTestdata(t *testing.T) {
	dirs, err := PublicPackages(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, dir := range dirs {
		rel, err := filepath.Rel(moduleRoot, dir)
		if err != nil {
			t.Fatal(err)
		}
		found[filepath.ToSlash(rel)] = true
	}
	for _, want := range []string{".", "sdktest", "schema", "seam"} {
		if !found[want] {
			t.Errorf("PublicPackages misses %q; found %v", want, dirs)
		}
	}
	for rel := range found {
		if slices.Contains(strings.Split(rel, "/"), "internal") || slices.Contains(strings.Split(rel, "/"), "testdata") {
			t.Errorf("PublicPackages includes %q", rel)
		}
	}
}
