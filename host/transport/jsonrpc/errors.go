package jsonrpc

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// InvalidParams gives a resource read or prompt refused for its arguments
// (a plugin's 400, say an invalid sdd:// id or a missing prompt argument)
// the JSON-RPC invalid-params code: mcp-go reports every failed read or
// prompt as an internal error.
func InvalidParams(method string, resp mcp.JSONRPCMessage) mcp.JSONRPCMessage {
	e, ok := resp.(mcp.JSONRPCError)
	if !ok || (method != string(mcp.MethodResourcesRead) && method != string(mcp.MethodPromptsGet)) || e.Error.Code != mcp.INTERNAL_ERROR {
		return resp
	}
	code, _, _ := strings.Cut(e.Error.Message, ":")
	if code == errs.InvalidInput || (method == string(mcp.MethodPromptsGet) && strings.HasSuffix(code, "NOT_FOUND")) {
		e.Error.Code = mcp.INVALID_PARAMS
	}
	return e
}
