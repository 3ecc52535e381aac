package sdd

import (
	"context"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
)

// storeCopyTool moves a data dir's SDD state into PostgreSQL for
// `cairn store copy`.
func (s *Area) storeCopyTool() {
	sdk.AddTool(s.p, sdk.Tool[kv.CopyInput, engine.CopyReport]{
		Name: "sdd_store_copy", Title: "Copy the SDD state to PostgreSQL", Toolset: sdk.InternalToolset,
		Description: "For the host only (reserved toolset internal, never listed to clients): copies the SDD state document of the data dir from into the empty PostgreSQL database to and reads it back to compare. Refuses a database that holds an SDD state.",
		Handler: func(ctx context.Context, in kv.CopyInput) (engine.CopyReport, error) {
			if err := in.Check(); err != nil {
				return engine.CopyReport{}, err
			}
			return engine.CopyState(ctx, in.From, in.To)
		},
	})
}
