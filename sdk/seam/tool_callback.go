package seam

import "encoding/json"

// ToolCallback is a plugin's request to run another area's tool for one of
// its running calls, as that call's caller (docs/decisions.md D45): the
// host knows the caller from the channel, so the plugin never names one.
type ToolCallback struct {
	// Channel is the tool channel the running call came with.
	Channel uint64
	// Tool is the tool to run, and Args its arguments (a JSON object).
	Tool string
	Args json.RawMessage
	// IdempotencyKey, when set, makes the inner call exactly once: the
	// host files it under the running call's own key.
	IdempotencyKey string
}
