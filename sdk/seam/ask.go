package seam

import "encoding/json"

// Ask is a plugin's request to the MCP client of one of its running calls
// (sampling/createMessage or elicitation/create).
type Ask struct {
	// Channel is the client channel the call came with.
	Channel uint64
	Method  string
	// Params are the request's MCP params (JSON).
	Params json.RawMessage
}
