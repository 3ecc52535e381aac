package registry

import "encoding/json"

// DefaultBudget is the most the default toolsets' tools may cost a model:
// the sum of their Footprint's Model bytes (docs/decisions.md D37).
const DefaultBudget = 16 * 1024

// Footprint is what one tool costs in a tools/list result, in bytes of
// compact JSON as the list carries it (docs/decisions.md D37).
type Footprint struct {
	// Model counts what a model reads: name, title, description,
	// inputSchema, annotations and a task tool's execution.
	Model int
	// Wire counts the whole entry, outputSchema included.
	Wire int
}

// listedTool is a tools/list entry as the host sends it (host mcpTool).
type listedTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Hints           `json:"annotations"`
	Execution    *execution      `json:"execution,omitempty"`
}

// execution is a task tool's execution member (docs/decisions.md D39).
type execution struct {
	TaskSupport string `json:"taskSupport"`
}

// Hints are the MCP tool hints tools/list carries for a tool. Each is set
// only where it says something: where it differs from MCP's default
// (readOnlyHint false, destructiveHint true, idempotentHint false,
// openWorldHint true), and destructiveHint and idempotentHint only on a
// tool that writes, the only kind they describe. Repeating the defaults
// cost every tool about 40 bytes of a model's context (docs/decisions.md
// D37).
type Hints struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// Hints returns t's hints as tools/list carries them.
func (t *Tool) Hints() Hints {
	yes, no := true, false
	var h Hints
	if t.ReadOnly {
		h.ReadOnly = &yes
	} else {
		if !t.Destructive {
			h.Destructive = &no
		}
		if t.Idempotent {
			h.Idempotent = &yes
		}
	}
	if !t.OpenWorld {
		h.OpenWorld = &no
	}
	return h
}

// Footprint measures t's tools/list entry.
func (t *Tool) Footprint() Footprint {
	l := listedTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
	l.Annotations = t.Hints()
	if t.TaskSupport != "" {
		l.Execution = &execution{TaskSupport: t.TaskSupport}
	}
	model, _ := json.Marshal(l)
	l.OutputSchema = t.OutputSchema
	wire, _ := json.Marshal(l)
	return Footprint{Model: len(model), Wire: len(wire)}
}
