package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// clientAsks holds the tool calls whose client a plugin may ask something
// (sampling, elicitation) while the call runs, by channel number.
type clientAsks struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]askableCall
}

// askableCall is a running call: its MCP request context (session, and
// over HTTP the request's stream) and the plugin it went to.
type askableCall struct {
	ctx    context.Context
	plugin string
}

// open registers a call and returns its channel and the func that closes
// it when the call ends. It returns 0 when the client cannot be asked: it
// declared neither sampling nor elicitation, speaks protocol 2026-07-28
// (which has no server-to-client requests), or its transport carries none.
func (a *clientAsks) open(ctx context.Context, plugin string) (uint64, func()) {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return 0, func() {}
	}
	sess := server.ClientSessionFromContext(ctx)
	ci, ok := sess.(server.SessionWithClientInfo)
	if !ok {
		return 0, func() {}
	}
	caps := ci.GetClientCapabilities()
	_, canSample := sess.(server.SessionWithSampling)
	_, canElicit := sess.(server.SessionWithElicitation)
	if !(caps.Sampling != nil && canSample) && !(caps.Elicitation != nil && canElicit) {
		return 0, func() {}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[uint64]askableCall{}
	}
	a.next++
	ch := a.next
	a.calls[ch] = askableCall{ctx: ctx, plugin: plugin}
	return ch, func() {
		a.mu.Lock()
		delete(a.calls, ch)
		a.mu.Unlock()
	}
}

// askClient sends a plugin's request to the client of one of its running
// calls and returns the client's result, or the typed error that kept the
// client from answering. rpcCtx is the plugin's request: its end (the
// plugin gave up) ends the wait, as does the call's.
func (srv *Server) askClient(rpcCtx context.Context, owner string, req seam.Ask) (json.RawMessage, *errs.Error) {
	srv.asks.mu.Lock()
	call, ok := srv.asks.calls[req.Channel]
	srv.asks.mu.Unlock()
	if !ok || call.plugin != owner {
		return askFailed(errs.New(409, errs.ClientUnsupported, "no running call of this plugin has that client channel: ask only while the tool call runs, with the channel it came with").With("field", "client_channel"))
	}
	ctx, cancel := context.WithCancel(call.ctx)
	defer cancel()
	defer context.AfterFunc(rpcCtx, cancel)()

	sess := server.ClientSessionFromContext(ctx)
	caps := sess.(server.SessionWithClientInfo).GetClientCapabilities()
	var result any
	var err error
	switch mcp.MCPMethod(req.Method) {
	case mcp.MethodSamplingCreateMessage:
		if caps.Sampling == nil {
			return askFailed(errs.New(501, errs.ClientUnsupported, "the calling client did not declare the sampling capability, so the tool cannot ask it for a completion").With("capability", "sampling"))
		}
		var r mcp.CreateMessageRequest
		if err := json.Unmarshal(req.Params, &r.CreateMessageParams); err != nil {
			return askFailed(errs.Invalid("params", "json", "sampling/createMessage params: "+err.Error()))
		}
		r.Method = string(mcp.MethodSamplingCreateMessage)
		//lint:ignore SA1019 sampling is deprecated in 2026-07-28 but part of 2025-11-25, which still asks for it
		result, err = srv.mcp.RequestSampling(ctx, r)
	case mcp.MethodElicitationCreate:
		if caps.Elicitation == nil {
			return askFailed(errs.New(501, errs.ClientUnsupported, "the calling client did not declare the elicitation capability, so the tool cannot ask its user").With("capability", "elicitation"))
		}
		var r mcp.ElicitationRequest
		if err := json.Unmarshal(req.Params, &r.Params); err != nil {
			return askFailed(errs.Invalid("params", "json", "elicitation/create params: "+err.Error()))
		}
		r.Method = string(mcp.MethodElicitationCreate)
		result, err = srv.mcp.RequestElicitation(ctx, r)
	default:
		return askFailed(errs.Invalid("method", "enum", "a plugin may ask the client sampling/createMessage or elicitation/create, not "+req.Method))
	}
	if err != nil {
		if ctx.Err() != nil {
			return askFailed(errs.New(499, errs.Cancelled, "the call ended before the client answered "+req.Method))
		}
		return askFailed(errs.New(502, errs.UpstreamFailed, "the client did not answer "+req.Method+": "+err.Error()))
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return askFailed(errs.New(502, errs.UpstreamFailed, "the client's answer to "+req.Method+" cannot be encoded: "+err.Error()))
	}
	return raw, nil
}

func askFailed(e *errs.Error) (json.RawMessage, *errs.Error) { return nil, e }
