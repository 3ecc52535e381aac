package sdktest

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/internal/examplecheck"
)

// Every exported name of package sdktest has an Example, as in package
// sdk: they also run each of the adapter's methods.
func TestEveryExportedNameHasAnExample(t *testing.T) {
	missing, err := examplecheck.Missing(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range missing {
		t.Errorf("%s has no Example function; add one to example_test.go", name)
	}
}
