package core

import (
	"context"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/storecopy"
	"github.com/cairn-mcp/cairn/sdk"
)

// storeCopyTool moves a data dir's core store into PostgreSQL for
// `cairn store copy`: the host never opens an area's store, it asks each
// area to copy its own.
func (c *Core) storeCopyTool() {
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
