package mcpserver

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// toolArgs carries a tools/call's arguments, as the raw bytes of the
// message, from the transport to the tool handler. mcp-go would decode them
// into map[string]any (tens of bytes per JSON token) and keep two more
// copies; the host needs them raw (docs/decisions.md D33).
type toolArgs struct {
	raw   json.RawMessage
	taken atomic.Bool
}

type toolArgsKey struct{}

// liftToolArguments takes a tools/call's arguments out of msg before mcp-go
// sees it: it returns msg with the arguments replaced by {} and ctx carrying
// them. Any other message, a call to a tool with a handler of its own (not
// the host's, whose arguments mcp-go must pass), or one whose shape the
// scan is not sure of (a key written with escapes or in another case,
// which encoding/json would still match, or a repeated key), is returned as
// it is, for mcp-go to decode as before. msg must be valid JSON.
func (srv *Server) liftToolArguments(ctx context.Context, method string, msg []byte) (context.Context, []byte) {
	if method != string(mcp.MethodToolsCall) {
		return ctx, msg
	}
	ps, pe, ok := (&rawjson.Scanner{B: msg}).Member("params")
	if !ok || msg[ps] != '{' {
		return ctx, msg
	}
	params := msg[:pe]
	var name string
	if ns, ne, ok := (&rawjson.Scanner{B: params, I: ps}).Member("name"); !ok || json.Unmarshal(msg[ns:ne], &name) != nil {
		return ctx, msg
	}
	if _, ours := srv.catalog.Get(name); !ours && srv.mcp.GetTool(name) != nil {
		return ctx, msg
	}
	start, end, ok := (&rawjson.Scanner{B: params, I: ps}).Member("arguments")
	if !ok {
		return ctx, msg
	}
	return liftSpan(ctx, msg, start, end)
}

// liftProbed is liftToolArguments for a message jsonrpc.ProbeMessage scanned: it
// takes the arguments where the probe found them, without scanning the
// message again.
func (srv *Server) liftProbed(ctx context.Context, p jsonrpc.Probe, msg []byte) (context.Context, []byte) {
	if p.Method != string(mcp.MethodToolsCall) {
		return ctx, msg
	}
	c := p.Call
	if !c.Scanned {
		return srv.liftToolArguments(ctx, p.Method, msg)
	}
	if c.Params[1] == 0 || c.Name[1] == 0 || c.Args[1] == 0 {
		return ctx, msg
	}
	name, plain := rawjson.PlainString(msg[c.Name[0]:c.Name[1]])
	if !plain {
		return srv.liftToolArguments(ctx, p.Method, msg)
	}
	if _, ours := srv.catalog.Get(name); !ours && srv.mcp.GetTool(name) != nil {
		return ctx, msg
	}
	return liftSpan(ctx, msg, c.Args[0], c.Args[1])
}

// liftSpan takes msg[start:end] out of msg, leaving {} in its place.
func liftSpan(ctx context.Context, msg []byte, start, end int) (context.Context, []byte) {
	out := make([]byte, 0, start+2+len(msg)-end)
	out = append(append(append(out, msg[:start]...), "{}"...), msg[end:]...)
	return context.WithValue(ctx, toolArgsKey{}, &toolArgs{raw: msg[start:end:end]}), out
}

// liftedArguments returns the arguments liftToolArguments took out of the
// message being handled, once: a tool that calls another with the same
// context does not pass them on.
func liftedArguments(ctx context.Context) (json.RawMessage, bool) {
	a, ok := ctx.Value(toolArgsKey{}).(*toolArgs)
	if !ok || !a.taken.CompareAndSwap(false, true) {
		return nil, false
	}
	return a.raw, true
}
