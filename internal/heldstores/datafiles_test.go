package heldstores_test

import (
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	adminstore "github.com/cairn-mcp/cairn/plugins/admin/store"
	corestore "github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
)

// The files that show a data dir without an inventory has held data are
// the built-in areas' stores and the audit key, by the names those
// packages use.
func TestDataFilesAreTheAreasFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{corestore.FileName, adminstore.FileName, engine.StateFile, bundle.KeyFile} {
		if !slices.Contains(heldstores.DataFiles, name) {
			t.Errorf("%s is not among %v", name, heldstores.DataFiles)
		}
	}
}
