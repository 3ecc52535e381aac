package rpcid

import (
	"bytes"
	"encoding/json"
)

// maxNamed bounds how much of an id a refusal's message repeats: the
// answer carries the whole id in its own id member already.
const maxNamed = 64

// InFlightMessage is the message of the JSON-RPC error (-32600, invalid
// request) that refuses a request whose id an earlier request of the same
// session still holds (docs/decisions.md D42): the two are never merged,
// and the transports and the relay say it in the same words.
func InFlightMessage(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	named := string(raw)
	if len(named) > maxNamed {
		named = string(bytes.ToValidUTF8(raw[:maxNamed], nil)) + "…"
	}
	return "Invalid request: request id " + named + " is already in flight in this session; use a new id"
}
