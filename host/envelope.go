package host

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// Every JSON-RPC request gets exactly one answer (docs/decisions.md D32),
// including one whose envelope is malformed: such a message is answered
// here, before mcp-go sees it, because mcp-go answers a request it cannot
// decode with id null (which no client can match to its request) or echoes
// an id no client may use.

// requestProbe is the one look the host takes at a message before mcp-go
// decodes it: no maps, since it is on every call.
type requestProbe struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta struct {
			ProtocolVersion json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
			IdempotencyKey  json.RawMessage `json:"io.cairn/idempotencyKey"`
		} `json:"_meta"`
	} `json:"params"`
}

// probeMessage reads a message's envelope. handled reports a malformed
// message that goes no further, answered with answer (nil: nothing may
// answer it).
func probeMessage(line []byte) (p requestProbe, answer *mcp.JSONRPCError, handled bool) {
	if json.Unmarshal(line, &p) == nil && (len(p.ID) == 0 && p.Method != "" || len(p.ID) > 0 && ValidID(p.ID)) {
		return p, nil, false
	}
	// The slow path, for malformed messages only.
	answer, _ = envelopeError(line)
	return p, answer, true
}

// maxSafeID bounds integer ids: mcp-go decodes a number through float64,
// so a larger integer would come back as another id.
const maxSafeID = 1<<53 - 1

// ValidID reports whether raw is an id MCP allows: a string, or an integer
// written the way it is written back. null, fractions, arrays and objects
// are not ids.
func ValidID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true // the message as a whole is valid JSON
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n >= -maxSafeID && n <= maxSafeID && strconv.FormatInt(n, 10) == string(raw)
}

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
	id := decodeID(env.ID)
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

// decodeID returns a valid id as mcp-go holds it (string or int64).
func decodeID(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	n, _ := strconv.ParseInt(string(raw), 10, 64)
	return n
}
