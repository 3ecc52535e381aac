package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// callParamKeys are the members of a tools/call's params the direct path
// looks at: _meta, which it decodes, and task, which sends the call to
// mcp-go (a task-augmented call).
var callParamKeys = []string{"_meta", "task"}

// callToolDirect answers a tools/call of a byte-stream session without
// mcp-go's HandleMessage, which decodes the whole message twice more (the
// envelope, then the request with its arguments as a map) to reach the same
// tool handler (docs/decisions.md D33). The transport scanned the envelope
// of line (the message as read) and lifted the arguments already; here
// only the small _meta is decoded.
// ok is false for anything this path does not cover exactly as mcp-go
// would — a 2026-07-28 request (its _meta carries the protocol state mcp-go
// sets up), a task-augmented call, a tool the registry does not hold, a
// message the probe did not scan — and mcp-go answers it.
func (srv *Server) callToolDirect(ctx context.Context, p jsonrpc.Probe, line []byte) (resp mcp.JSONRPCMessage, ok bool) {
	c := p.Call
	if p.Method != string(mcp.MethodToolsCall) || !c.Scanned || len(p.Params.Meta.ProtocolVersion) > 0 ||
		c.Params[1] == 0 || c.Name[1] == 0 || !rpcid.Valid(p.ID) {
		return nil, false
	}
	name, plain := rawjson.PlainString(line[c.Name[0]:c.Name[1]])
	if !plain {
		return nil, false
	}
	if _, ours := srv.catalog.Get(name); !ours || srv.mcp.GetTool(name) == nil {
		return nil, false
	}
	spans := make([][2]int, len(callParamKeys))
	if !(&rawjson.Scanner{B: line, I: c.Params[0]}).Members(callParamKeys, spans) || spans[1][1] != 0 {
		return nil, false
	}
	var req mcp.CallToolRequest
	req.Method = string(mcp.MethodToolsCall)
	req.Params.Name = name
	if m := spans[0]; m[1] != 0 {
		if json.Unmarshal(line[m[0]:m[1]], &req.Params.Meta) != nil {
			return nil, false // mcp-go refuses it in its own words
		}
	}
	id := mcp.NewRequestId(rpcid.Decode(p.ID))
	defer func() {
		// As mcp-go's recovery middleware answers a handler's panic.
		if r := recover(); r != nil {
			resp, ok = mcp.NewJSONRPCError(id, mcp.INTERNAL_ERROR, fmt.Sprintf("panic recovered in %s tool handler: %v", name, r), nil), true
		}
	}()
	res, err := srv.toolHandler(name)(ctx, req)
	if err != nil {
		return mcp.NewJSONRPCError(id, mcp.INTERNAL_ERROR, err.Error(), nil), true
	}
	return mcp.NewJSONRPCResultResponse(id, res), true
}
