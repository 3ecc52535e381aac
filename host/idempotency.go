package host

import (
	"context"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/session"
	httpserve "github.com/cairn-mcp/cairn/host/transport/http"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Every write carries an idempotency key from the edge to the store
// (docs/decisions.md D32). Where it comes from:
//
//   - a client's own key — HTTP's Idempotency-Key header, or
//     _meta["io.cairn/idempotencyKey"] on any transport — scoped by the
//     caller, so one principal's key never returns another's outcome; a
//     retry with it returns the first outcome;
//   - else a byte-stream session's key (the relay's, which survives a daemon
//     restart, or one minted per connection) with the request's JSON-RPC id;
//   - else (HTTP without a key) one minted per request, so the host can still
//     replay the call on a restarted plugin.

// MetaIdempotencyKey is the _meta field a client names its key in.
const MetaIdempotencyKey = "io.cairn/idempotencyKey"

// maxClientKey bounds a client's key: it is stored with each write.
const maxClientKey = 255

// idempotencyOf decides call's key; an error refuses a client key that is
// malformed or sent to a write that cannot honour it.
func (h *Host) idempotencyOf(ctx context.Context, req mcp.CallToolRequest, call *pipeline.Call) *errs.Error {
	client, set := httpserve.IdempotencyKey(ctx)
	field := "Idempotency-Key"
	if !set && req.Params.Meta != nil {
		if v, ok := req.Params.Meta.AdditionalFields[MetaIdempotencyKey]; ok {
			field = "_meta." + MetaIdempotencyKey
			s, isString := v.(string)
			if !isString {
				return errs.Invalid(field, "type", "the idempotency key must be a string")
			}
			client, set = s, true
		}
	}
	if set {
		if e := checkClientKey(field, client); e != nil {
			return e
		}
		if t := call.Tool; t != nil && !t.ReadOnly && !t.HonoursIdempotency {
			return errs.Invalid(field, "honoured",
				"tool "+call.Name+" does not honour idempotency keys, so a retry with this key could apply it twice; call it without a key").
				With("tool", call.Name)
		}
		call.IdempotencyKey = "client:" + call.Caller.Source + ":" + call.Caller.ID + ":" + client
		return nil
	}
	if m, ok := session.CallOf(ctx); ok && m.Key != "" {
		call.IdempotencyKey, call.Replay = m.Key+":"+m.ID, m.Replay
		return nil
	}
	call.IdempotencyKey = "call:" + session.NewKey()
	return nil
}

// checkClientKey: 1 to 255 bytes of printable text.
func checkClientKey(field, k string) *errs.Error {
	if k == "" || len(k) > maxClientKey || !utf8.ValidString(k) {
		return errs.Invalid(field, "length", "the idempotency key must be 1 to 255 bytes of UTF-8 text")
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return errs.Invalid(field, "pattern", "the idempotency key must not contain control characters")
		}
	}
	return nil
}
