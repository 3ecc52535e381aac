package sdd

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/toolsnap"
)

func TestToolSnapshots(t *testing.T) {
	t.Parallel()
	toolsnap.Check(t, New(), "testdata/toolsnaps")
	toolsnap.CheckDerived(t, New(), derivedSchemas, "schemas_derived.go", "derivedSchemas")
}
