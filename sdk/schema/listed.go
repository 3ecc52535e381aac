package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// listedOutput is the output schema every tool publishes in tools/list.
var listedOutput = json.RawMessage(`{"type":"object","properties":{"error":{"type":"object"}}}`)

// Listed returns the output schema a tool publishes in tools/list for its
// full output schema: an object that may carry "error" (docs/decisions.md D3).
// It requires no field and admits unknown ones, so it accepts both the
// success object and the error envelope without repeating the envelope's
// definition in every tool. The full schema stays with the plugin, which
// checks every output against it (Validator, CAIRN_MODE=TEST), and in the
// tool snapshots and docs/tools.md; listing it would cost a client's
// context on every tools/list (issue 15: half of the list's bytes).
func Listed(full json.RawMessage) (json.RawMessage, error) {
	// A check, not a decode: the host lists every tool of every plugin at
	// start-up, and decoding each full output schema only to drop it was a
	// tenth of the host's start-up.
	if len(full) > 0 {
		trimmed := bytes.TrimSpace(full)
		if !json.Valid(trimmed) || trimmed[0] != '{' {
			return nil, fmt.Errorf("output schema is not a JSON object: %.40s", full)
		}
	}
	return append(json.RawMessage(nil), listedOutput...), nil
}
