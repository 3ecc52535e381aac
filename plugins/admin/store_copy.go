package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// storeCopyTool moves a data dir's admin store into PostgreSQL for
// `cairn store copy`.
func (a *Area) storeCopyTool() {
	sdk.AddTool(a.p, sdk.Tool[kv.CopyInput, store.CopyReport]{
		Name: "admin_store_copy", Title: "Copy the admin store to PostgreSQL", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): copies every pair of the admin store (admin.db) in the data dir from into the empty PostgreSQL database to and counts them there. Refuses a database that holds admin data.",
		Handler: func(ctx context.Context, in kv.CopyInput) (store.CopyReport, error) {
			if err := requireOperator(actor(ctx), "", "admin_store_copy (cairn store copy)"); err != nil {
				return store.CopyReport{}, err
			}
			if err := in.Check(); err != nil {
				return store.CopyReport{}, err
			}
			return store.CopyToPostgres(ctx, in.From, in.To)
		},
	})
}
