// Package rpcid is the one rule for JSON-RPC request ids that the host's
// envelope check and the relay's tracking share (docs/decisions.md D32): an
// id is a string, or an integer written the way it is written back, within
// ±(2^53−1) because the JSON-RPC layer reads numbers through float64.
// null, fractions, arrays and objects are not ids.
package rpcid

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// MaxSafe bounds integer ids.
const MaxSafe = 1<<53 - 1

// Valid reports whether raw is an id MCP allows. raw comes from a message
// that is valid JSON, so a string needs no further check.
func Valid(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true
	}
	_, ok := integer(raw)
	return ok
}

// Key is the form an id is tracked under: the same for the id a client
// wrote and the one a server writes back, though its encoder may escape a
// string differently ("<" as "\u003c"). ok is false for what is not an id.
func Key(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
			return "s" + string(raw[1:len(raw)-1]), true
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	if _, ok := integer(raw); !ok {
		return "", false
	}
	return "n" + string(raw), true
}

// Decode returns a valid id as the JSON-RPC layer holds it (string or
// int64).
func Decode(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	n, _ := integer(raw)
	return n
}

func integer(raw []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil && n >= -MaxSafe && n <= MaxSafe && strconv.FormatInt(n, 10) == string(raw)
}
