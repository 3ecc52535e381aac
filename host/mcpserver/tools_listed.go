package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// filterListed keeps the tools the calling session sees.
func (srv *Server) filterListed(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	out := tools[:0]
	for _, mt := range tools {
		if srv.catalog.VisibleTo(ctx, mt.Name) {
			out = append(out, mt)
		}
	}
	return out
}
