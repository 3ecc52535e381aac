package core

import (
	"context"
	"os"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/storecopy"
	"github.com/cairn-mcp/cairn/sdk"
)

// Store tools for the host's operator commands: `cairn store copy` and
// `cairn migrate`.

// storeCopyTool moves a data dir's core store into PostgreSQL for
// `cairn store copy`: the host never opens an area's store, it asks each
// area to copy its own.
func (c *Area) storeCopyTool() {
	sdk.AddTool(c.p, sdk.Tool[kv.CopyInput, storecopy.Report]{
		Name: "core_store_copy", Title: "Copy the core store to PostgreSQL", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): copies every pair of the core store (core.db) in the data dir from into the empty PostgreSQL database to, then verifies every task's thought and event chain and every finalized audit session's Merkle root there; answers the counts. Refuses a database that holds core data and a store a running cairn holds.",
		Handler: func(ctx context.Context, in kv.CopyInput) (storecopy.Report, error) {
			if err := in.Check(); err != nil {
				return storecopy.Report{}, err
			}
			return storecopy.Copy(ctx, in.From, in.To)
		},
	})
}

// storeMigrationsTool reports the store's kind and migration state to the
// host (`cairn migrate status` and `apply`).
func (c *Area) storeMigrationsTool() {
	sdk.AddTool(c.p, sdk.Tool[struct{}, pgmigrate.StoreStatus]{
		Name: "core_store_migrations", Title: "Core store migrations", Toolset: sdk.InternalToolset, ReadOnly: true,
		Description: "For the host only (reserved toolset internal, never listed to clients): the core store's kind (bbolt or postgres) and, on PostgreSQL, its schema version, the latest version this build knows and the pending versions, read from cairn_migrations without applying anything.",
		Handler: func(ctx context.Context, _ struct{}) (pgmigrate.StoreStatus, error) {
			return store.ReadMigrations(ctx, os.Getenv(store.SettingEnv))
		},
	})
}
