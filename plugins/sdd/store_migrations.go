package sdd

import (
	"context"
	"os"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
)

// storeMigrationsTool reports the state store's kind and migration state
// to the host (`cairn migrate status` and `apply`).
func (s *Area) storeMigrationsTool() {
	sdk.AddTool(s.p, sdk.Tool[struct{}, pgmigrate.StoreStatus]{
		Name: "sdd_store_migrations", Title: "SDD store migrations", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): the SDD state store's kind (file or postgres) and, on PostgreSQL, its schema version, the latest version this build knows and the pending versions, read from cairn_migrations without applying anything.",
		Handler: func(ctx context.Context, _ struct{}) (pgmigrate.StoreStatus, error) {
			return engine.ReadMigrations(ctx, os.Getenv("CAIRN_STORE"))
		},
	})
}
