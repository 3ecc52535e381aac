package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// OperatorSource is the caller source of the operator's commands (cairn
// admin, project, audit): the local operator, who holds every right (D22).
const OperatorSource = "cli"

// OperatorCall runs one tool call for an operator command: in every mode
// and toolset, internal tools included. Internal tools go straight to their
// plugin, as the host's own calls do; the others pass the pipeline like any
// session's call.
func (srv *Server) OperatorCall(ctx context.Context, name string, args json.RawMessage, operatorID string) *seam.Result {
	tool, ok := srv.catalog.Get(name)
	if !ok {
		return pipeline.Fail(errs.NotFoundf(errs.NotFound, "name", "no loaded plugin provides the tool %s; `cairn plugins` shows which areas run", name))
	}
	caller := seam.Caller{ID: operatorID, Source: OperatorSource}
	if tool.Toolset == sdk.InternalToolset {
		return srv.CallInternal(ctx, name, args, caller)
	}
	ctx = clientsession.With(ctx, &clientsession.Settings{AgentID: operatorID, Mode: config.ModeFull, Toolsets: config.Toolsets{All: true}})
	return srv.pipe.Run(ctx, &pipeline.Call{Name: name, Tool: tool, Args: args, Caller: caller})
}

// Call runs one tool call through the pipeline as caller, exactly as an MCP
// client's call would run (the dashboard and the CLI act through it).
func (srv *Server) Call(ctx context.Context, name string, args json.RawMessage, caller seam.Caller) *seam.Result {
	tool, ok := srv.catalog.Get(name)
	if !ok {
		return pipeline.Fail(errs.NotFoundf(errs.NotFound, "name", "no tool named %q", name))
	}
	return srv.pipe.Run(ctx, &pipeline.Call{Name: name, Tool: tool, Args: args, Caller: caller})
}
