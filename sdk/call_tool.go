package sdk

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// ToolCaller runs another area's tool, name with args (a JSON object), for
// the tool call running in ctx and returns the tool's output object or its
// typed error. The SDK sets one for each call of a tool that declares
// CallsTools; tests set their own with WithToolCaller.
type ToolCaller func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)

// WithToolCaller returns a context whose CallTool calls go to f.
func WithToolCaller(ctx context.Context, f ToolCaller) context.Context {
	return context.WithValue(ctx, toolCallerKey, f)
}

// CallTool runs another area's tool while a tool call runs: name with
// args (any value that encodes as a JSON object; nil is {}), decoding the
// tool's output into out (unless out is nil). The call goes through the
// host's pipeline as the running call's caller, with its scopes, mode and
// toolsets: the plugin never names a caller, so none can borrow an
// identity (docs/decisions.md D35, D45). The tool's refusal comes back as
// its *errs.Error.
//
// The running call's tool must declare CallsTools; calling from anywhere
// else is a 409. The host refuses the plugin's own tools (call your own
// code), internal tools, and calls nested more than two deep. Cancelling
// the running call cancels the inner one.
//
// An inner call that writes is made exactly once when ctx carries its own
// idempotency key (WithIdempotency), derived from the running call's
// (IdempotencyOf) and what the inner call is for: the host files it under
// the running call's key. Without one the inner call carries no key.
func CallTool(ctx context.Context, name string, args any, out any) error {
	call, _ := ctx.Value(toolCallerKey).(ToolCaller)
	if call == nil {
		return errs.New(409, errs.Conflict, "sdk.CallTool runs another area's tool only while a tool call runs whose tool declares CallsTools").With("tool", name)
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return errs.Invalid("args", "json", "the arguments for "+name+" cannot be encoded: "+err.Error())
		}
		raw = b
	}
	res, err := call(ctx, name, raw)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res, out); err != nil {
		return errs.New(502, errs.UpstreamFailed, name+"'s output does not decode into the value given: "+err.Error()).With("tool", name)
	}
	return nil
}

// hostToolCaller runs tools through the host's CallAreaTool service on
// channel. outerKey is the running call's idempotency key: a key in ctx
// other than it names the inner call, and travels without the outer
// key's prefix (the host puts its own back).
func hostToolCaller(h hostLink, channel uint64, outerKey string) ToolCaller {
	return func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		cb := seam.ToolCallback{Channel: channel, Tool: name, Args: args}
		if k := IdempotencyOf(ctx).Key; k != "" && k != outerKey {
			cb.IdempotencyKey = strings.TrimPrefix(k, outerKey)
		}
		res, err := h.callAreaTool(ctx, cb)
		if err != nil {
			if ctx.Err() != nil {
				return nil, errs.New(499, errs.Cancelled, "the call ended before "+name+" answered").With("tool", name)
			}
			return nil, errs.New(502, errs.Unavailable, "the host did not run "+name+": "+err.Error()).With("tool", name)
		}
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Output, nil
	}
}

// withToolCaller lets the call's handler call other areas' tools when the
// host opened a tool channel for it.
func (s *server) withToolCaller(ctx context.Context, c seam.Call) context.Context {
	if c.ToolChannel == 0 {
		return ctx
	}
	s.p.mu.RLock()
	h := s.p.host
	s.p.mu.RUnlock()
	if h == nil {
		return ctx
	}
	return WithToolCaller(ctx, hostToolCaller(h, c.ToolChannel, c.IdempotencyKey))
}
