package mcpserver

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
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

// idempotencyOf decides call's key and returns how the client named it (for
// a conflict's message); an error refuses a client key that is malformed or
// sent to a write that cannot honour it.
func (srv *Server) idempotencyOf(ctx context.Context, req mcp.CallToolRequest, call *pipeline.Call) (keyName, *errs.Error) {
	client, set := httpserve.IdempotencyKey(ctx)
	field := "Idempotency-Key"
	if !set && req.Params.Meta != nil {
		if v, ok := req.Params.Meta.AdditionalFields[MetaIdempotencyKey]; ok {
			field = "_meta." + MetaIdempotencyKey
			s, isString := v.(string)
			if !isString {
				return keyName{}, errs.Invalid(field, "type", "the idempotency key must be a string")
			}
			client, set = s, true
		}
	}
	if set {
		if e := checkClientKey(field, client); e != nil {
			return keyName{}, e
		}
		if t := call.Tool; t != nil && !t.ReadOnly && !t.HonoursIdempotency {
			return keyName{}, errs.Invalid(field, "honoured",
				"tool "+call.Name+" does not honour idempotency keys, so a retry with this key could apply it twice; call it without a key").
				With("tool", call.Name)
		}
		call.IdempotencyKey = "client:" + call.Caller.Source + ":" + call.Caller.ID + ":" + client
		call.IdempotencyClient = true
		return keyName{field: field, text: fmt.Sprintf("%s %q", field, client)}, nil
	}
	if m, ok := clientsession.CallOf(ctx); ok && m.Key != "" {
		call.IdempotencyKey, call.Replay = m.Key+":"+m.ID, m.Replay
		return keyName{field: "id", text: "request id " + m.ID + " of this session", requestID: true}, nil
	}
	call.IdempotencyKey = "call:" + clientsession.NewKey()
	return keyName{}, nil
}

// keyName is how the client named a call's idempotency key.
type keyName struct {
	field     string // "Idempotency-Key", "_meta.io.cairn/idempotencyKey" or "id"
	text      string // the key as the client sent it, quoted, or the request id
	requestID bool
}

// namedConflict rewrites a plugin's 409 for a key used for another call
// (constraint sameCall) to name the key as the client sent it, so the
// person reading it knows which header, field or request id to change
// (docs/decisions.md D42). Other errors pass unchanged.
func namedConflict(e *errs.Error, k keyName) {
	if e == nil || k.text == "" || e.Code != errs.Conflict || e.Details["constraint"] != "sameCall" {
		return
	}
	if k.requestID {
		e.Message = k.text + " was already used for another call (another tool or other arguments) in the last " +
			idempotency.DerivedHold.String() + "; JSON-RPC ids must not be reused within a session: send this call with a new id"
	} else {
		e.Message = k.text + " was already used for another call (another tool or other arguments) in the last " +
			idempotency.ClientHold.String() + "; a retry must repeat that call exactly, and a new call needs a new key"
	}
	e.Details["field"] = k.field
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
