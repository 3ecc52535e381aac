package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/fleet"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The server is the fleet's listener: what the plugins serve is published
// to MCP as they come and go.
var _ fleet.Listener = (*Server)(nil)

// Opened publishes an open plugin's resources, templates and prompts.
func (srv *Server) Opened(ctx context.Context, p *supervisor.Process) { srv.adoptResources(ctx, p) }

// Dropped forgets what a stopped plugin served.
func (srv *Server) Dropped(name string) { srv.dropResources(name) }

// ToolsChanged publishes the catalog's servable tools.
func (srv *Server) ToolsChanged() { srv.syncTools() }

// AskClient passes a plugin's request to the client of one of its running
// calls (client_asks.go).
func (srv *Server) AskClient(ctx context.Context, owner string, req seam.Ask) (json.RawMessage, *errs.Error) {
	return srv.askClient(ctx, owner, req)
}
