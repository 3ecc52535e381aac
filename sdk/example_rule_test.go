package sdk

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/internal/examplecheck"
)

// Every exported func, type and method of package sdk has an Example
// (example_test.go files), which go test compiles and runs: a plugin
// author learns the SDK from them.
func TestEveryExportedNameHasAnExample(t *testing.T) {
	missing, err := examplecheck.Missing(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range missing {
		t.Errorf("%s has no Example function; add one to an example_test.go", name)
	}
}
