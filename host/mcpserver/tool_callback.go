package mcpserver

import (
	"context"
	"sync"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// maxCallbackDepth is how deep calls made through a tool channel nest: a
// tool's handler may call a tool whose handler calls one more, no further,
// so two areas cannot call each other without end.
const maxCallbackDepth = 2

// toolCallbacks holds the running calls whose plugin may call other areas'
// tools as the call's caller (docs/decisions.md D45), by channel number.
// Only calls of tools that declare CallsTools are held, so the many calls
// that never use a channel pay nothing for it (docs/decisions.md D46).
type toolCallbacks struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]callbackCall
}

// callbackCall is a running call a plugin may call tools for: its context
// (the session's settings, its principal, its cancellation), the plugin it
// went to, the call itself (its caller and key), and how deep it runs
// under other calls.
type callbackCall struct {
	ctx    context.Context
	plugin string
	call   *pipeline.Call
	depth  int
}

// callbackDepthKey carries, in an inner call's context, how many calls it
// runs under.
type callbackDepthKey struct{}

// open registers call c, running in ctx on plugin, and returns its channel
// and the func that closes it when the call ends.
func (t *toolCallbacks) open(ctx context.Context, plugin string, c *pipeline.Call) (uint64, func()) {
	depth, _ := ctx.Value(callbackDepthKey{}).(int)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.calls == nil {
		t.calls = map[uint64]callbackCall{}
	}
	t.next++
	ch := t.next
	t.calls[ch] = callbackCall{ctx: ctx, plugin: plugin, call: c, depth: depth}
	return ch, func() {
		t.mu.Lock()
		delete(t.calls, ch)
		t.mu.Unlock()
	}
}

// CallAreaTool runs another area's tool for one of owner's running calls
// (fleet.Listener).
func (srv *Server) CallAreaTool(ctx context.Context, owner string, call seam.ToolCallback) seam.Result {
	return *srv.callAreaTool(ctx, owner, call)
}

// callAreaTool runs a plugin's inner call through the pipeline as the
// running call's caller: the running call's context carries its session's
// mode, toolsets and principal, and the inner call takes its caller, so
// the plugin can neither name nor borrow an identity (docs/decisions.md
// D35). rpcCtx is the plugin's request: its end (the plugin gave up) ends
// the inner call, as does the running call's.
func (srv *Server) callAreaTool(rpcCtx context.Context, owner string, cb seam.ToolCallback) *seam.Result {
	srv.callbacks.mu.Lock()
	run, ok := srv.callbacks.calls[cb.Channel]
	srv.callbacks.mu.Unlock()
	if !ok || run.plugin != owner {
		return pipeline.Fail(errs.New(409, errs.Conflict, "no running call of this plugin has that tool channel: call other areas' tools only while a call of a tool that declares CallsTools runs").With("field", "tool_channel"))
	}
	if run.depth >= maxCallbackDepth {
		return pipeline.Fail(errs.Newf(409, errs.LimitExceeded, "%s runs %d calls deep already: calls through a tool channel nest at most %d deep", run.call.Name, run.depth, maxCallbackDepth).
			With("field", "tool").With("limit", maxCallbackDepth))
	}
	tool, ok := srv.catalog.Get(cb.Tool)
	switch {
	case !ok:
		return pipeline.Fail(errs.NotFoundf(errs.NotFound, "tool", "no loaded plugin provides the tool %q", cb.Tool))
	case tool.Toolset == sdk.InternalToolset:
		return pipeline.Fail(errs.New(403, errs.Forbidden, cb.Tool+" is an internal tool: only the host's own features call it").With("field", "tool").With("constraint", "listed"))
	case tool.Owner == owner:
		return pipeline.Fail(errs.Invalidf("tool", "otherArea", "%s is this plugin's own tool: call your own code, not the host", cb.Tool))
	}
	ctx, cancel := context.WithCancel(context.WithValue(run.ctx, callbackDepthKey{}, run.depth+1))
	defer cancel()
	defer context.AfterFunc(rpcCtx, cancel)()
	inner := &pipeline.Call{
		Name: cb.Tool, Tool: tool, Args: cb.Args, Caller: run.call.Caller, RequestID: run.call.RequestID,
		TraceParent: run.call.TraceParent, TraceState: run.call.TraceState,
	}
	if cb.IdempotencyKey != "" && run.call.IdempotencyKey != "" {
		// Filed under the running call's key, which the host scoped to
		// its caller: a plugin cannot name another caller's key.
		inner.IdempotencyKey = run.call.IdempotencyKey + cb.IdempotencyKey
		inner.IdempotencyClient = run.call.IdempotencyClient
	}
	out := srv.pipe.Run(ctx, inner)
	if out.Err != nil && run.ctx.Err() != nil {
		return pipeline.Fail(errs.New(499, errs.Cancelled, "the call ended before "+cb.Tool+" answered").With("tool", cb.Tool))
	}
	return out
}
