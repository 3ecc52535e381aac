package main

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newServer is the MCP server with the two tools the floors are measured
// by: server_ping, answered in this process (it never reaches a plugin in
// cairn either), and task_get, answered by the plugin when there is one.
func newServer(p *plugin) *server.MCPServer {
	s := server.NewMCPServer("floor-shaped", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("server_ping", mcp.WithDescription("Answers at once.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"ok": true}, `{"ok":true}`), nil
		})
	if p == nil {
		return s
	}
	s.AddTool(mcp.NewTool("task_get",
		mcp.WithDescription("Hands the call to the plugin and returns its answer."),
		mcp.WithString("task_id", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := json.Marshal(req.GetArguments())
		if err != nil {
			return nil, err
		}
		answer, err := p.call(args)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultStructured(json.RawMessage(answer), string(answer)), nil
	})
	return s
}
