package mcpserver

import (
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk"
)

// What an HTTP request may name when it chooses its toolsets and tools
// (docs/decisions.md D39): the servable tools, never the internal ones
// (catalog.ChoosableToolsets names the toolsets).

// toolFacts describes a servable tool for a request's choice: its toolset,
// the API-key scope it needs (D22) and whether it only reads.
func (srv *Server) toolFacts(name string) (httpserve.ToolFacts, bool) {
	t, ok := srv.catalog.Get(name)
	if !ok || t.Toolset == sdk.InternalToolset {
		return httpserve.ToolFacts{}, false
	}
	return httpserve.ToolFacts{Toolset: t.Toolset, Scope: pipeline.RequiredScope(t), ReadOnly: t.ReadOnly}, true
}
