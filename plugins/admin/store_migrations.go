package admin

import (
	"context"
	"os"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// storeMigrationsTool reports the store's kind and migration state to the
// host (`cairn migrate status` and `apply`).
func (a *Area) storeMigrationsTool() {
	sdk.AddTool(a.p, sdk.Tool[struct{}, pgmigrate.StoreStatus]{
		Name: "admin_store_migrations", Title: "Admin store migrations", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): the admin store's kind (bbolt or postgres) and, on PostgreSQL, its schema version, the latest version this build knows and the pending versions, read from cairn_migrations without applying anything.",
		Handler: func(ctx context.Context, _ struct{}) (pgmigrate.StoreStatus, error) {
			if err := requireOperator(actor(ctx), "", "admin_store_migrations (the host's own migration report)"); err != nil {
				return pgmigrate.StoreStatus{}, err
			}
			return store.ReadMigrations(ctx, os.Getenv(store.SettingEnv))
		},
	})
}
