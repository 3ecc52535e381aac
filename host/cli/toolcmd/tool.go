// Package toolcmd generates operator commands from tools' declarations: a
// tool's name, title, description and input JSON Schema become a cobra
// command whose flags, help and validation all come from that schema. The
// admin CLI is built with it, and any area's tools can be offered the same
// way; it knows nothing of where the call runs (Runtime says).
package toolcmd

import "encoding/json"

// Tool is the part of a tool's declaration a command is generated from, as
// tools/list publishes it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	ReadOnly    bool            `json:"readOnly"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Inventory finds the declaration of a tool by name.
type Inventory map[string]Tool
