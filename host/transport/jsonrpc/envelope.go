// Package jsonrpc is what every transport does to a JSON-RPC message before
// and after mcp-go: one look at a request's envelope (its id, method,
// protocol version and where a tool call's arguments lie), the answer to a
// malformed one, and the fast encoder of tool call answers. It knows MCP's
// wire shapes, nothing of the host.
package jsonrpc

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/sdk/rawjson"
)

// Every JSON-RPC request gets exactly one answer (docs/decisions.md D32),
// including one whose envelope is malformed: such a message is answered
// here, before mcp-go sees it, because mcp-go answers a request it cannot
// decode with id null (which no client can match to its request) or echoes
// an id no client may use.

// Probe is the one look the host takes at a message before mcp-go
// decodes it: no maps, since it is on every call.
type Probe struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			ProtocolVersion json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
			IdempotencyKey  json.RawMessage `json:"io.cairn/idempotencyKey"`
		} `json:"_meta"`
	} `json:"params"`
	// Call is where params, its name and its arguments lie in the message,
	// when the probe scanned it (the host lifts the arguments from there).
	Call Spans `json:"-"`
}

// Spans are offsets into a message: [0, 0] for a member that is absent.
type Spans struct {
	Scanned            bool
	Params, Name, Args [2]int
}

// ProbeMessage reads a message's envelope. handled reports a malformed
// message that goes no further, answered with answer (nil: nothing may
// answer it).
//
// A message is scanned once, without reflection (scanRequest); one whose
// shape the scan is not sure of is decoded by encoding/json, as before.
func ProbeMessage(line []byte) (p Probe, answer *mcp.JSONRPCError, handled bool) {
	ok := false
	if json.Valid(line) {
		p, ok = scanRequest(line)
	}
	if !ok {
		p = Probe{}
		ok = json.Unmarshal(line, &p) == nil
	}
	if ok && (len(p.ID) == 0 && p.Method != "" || len(p.ID) > 0 && ValidID(p.ID)) {
		return p, nil, false
	}
	// The slow path, for malformed messages only.
	answer, _ = envelopeError(line)
	return p, answer, true
}

// ValidID reports whether raw is an id MCP allows (host/internal/rpcid).
func ValidID(raw json.RawMessage) bool { return rpcid.Valid(raw) }

// envelopeError checks the envelope of one JSON-RPC message the fast probe
// could not decode, or whose id is not one MCP allows. handled reports
// that the message goes no further; answer is what to send back, nil for a
// malformed notification or a stray response (JSON-RPC answers neither).
func envelopeError(line []byte) (answer *mcp.JSONRPCError, handled bool) {
	fail := func(id any, code int, msg string) (*mcp.JSONRPCError, bool) {
		return &mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(code, msg, nil)}, true
	}
	if !json.Valid(line) {
		return fail(nil, mcp.PARSE_ERROR, "Parse error: the message is not valid JSON")
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &env) != nil {
		return fail(nil, mcp.INVALID_REQUEST, "Invalid request: a message must be a JSON object (batches are not part of MCP)")
	}
	switch {
	case len(env.ID) == 0:
		if len(env.Method) == 0 {
			return fail(nil, mcp.INVALID_REQUEST, "Invalid request: a message needs a method, or an id when it is a response")
		}
		// A notification: nothing may answer it.
		return nil, !methodIsString(env.Method) || !paramsAreObject(env.Params)
	case !ValidID(env.ID):
		if len(env.Method) == 0 {
			return nil, true // a response to nothing the server asked
		}
		return fail(nil, mcp.INVALID_REQUEST, "Invalid request: id must be a string or an integer within ±(2^53−1), never null")
	}
	id := rpcid.Decode(env.ID)
	switch {
	case len(env.Method) == 0:
		return nil, false // a response; its reader checks it
	case !methodIsString(env.Method):
		return fail(id, mcp.INVALID_REQUEST, "Invalid request: method must be a string")
	case !paramsAreObject(env.Params):
		return fail(id, mcp.INVALID_PARAMS, "Invalid params: params must be an object when present")
	case !metaIsObject(env.Params):
		return fail(id, mcp.INVALID_PARAMS, "Invalid params: params._meta must be an object when present")
	}
	return nil, false
}

// metaIsObject: params._meta may be absent or null, else an object.
func metaIsObject(params json.RawMessage) bool {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return true // no params, or null
	}
	return paramsAreObject(p.Meta)
}

func methodIsString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// paramsAreObject: params may be absent or null; otherwise MCP carries an
// object (a by-position array is JSON-RPC, but no MCP method takes one).
func paramsAreObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || raw[0] == '{' || string(raw) == "null"
}

// scanRequest reads a valid message into a Probe as encoding/json
// would, in one pass over its top level, its params and their _meta. false
// when the message needs encoding/json after all: any of them not an
// object, a method that is not a plain string, a key it looks for written
// twice, with escapes or in another case (which encoding/json would still
// match), or any key with escapes.
func scanRequest(line []byte) (p Probe, ok bool) {
	var top [3][2]int // id, method, params
	if !(&rawjson.Scanner{B: line}).Members([]string{"id", "method", "params"}, top[:]) {
		return p, false
	}
	if id := top[0]; id[1] > 0 {
		p.ID = line[id[0]:id[1]:id[1]]
	}
	if m := top[1]; m[1] > 0 {
		method, plain := rawjson.PlainString(line[m[0]:m[1]])
		if !plain {
			return p, false
		}
		p.Method = method
	}
	p.Call = Spans{Scanned: true, Params: top[2]}
	if top[2][1] == 0 {
		return p, true
	}
	if line[top[2][0]] != '{' {
		return p, false
	}
	var params [3][2]int // _meta, name, arguments
	if !(&rawjson.Scanner{B: line, I: top[2][0]}).Members([]string{"_meta", "name", "arguments"}, params[:]) {
		return p, false
	}
	p.Call.Name, p.Call.Args = params[1], params[2]
	if meta := params[0]; meta[1] > 0 {
		if line[meta[0]] != '{' {
			return p, false
		}
		var fields [2][2]int
		if !(&rawjson.Scanner{B: line, I: meta[0]}).Members([]string{"io.modelcontextprotocol/protocolVersion", "io.cairn/idempotencyKey"}, fields[:]) {
			return p, false
		}
		if v := fields[0]; v[1] > 0 {
			p.Params.Meta.ProtocolVersion = line[v[0]:v[1]:v[1]]
		}
		if v := fields[1]; v[1] > 0 {
			p.Params.Meta.IdempotencyKey = line[v[0]:v[1]:v[1]]
		}
	}
	return p, true
}
