package seam

import "encoding/json"

// Description is what a plugin says about itself at start-up, less its
// tools.
type Description struct {
	Name, Version, Description string
	// ProtocolVersion is the protocol version the plugin implements.
	ProtocolVersion int
	// Subscriptions are the bus event patterns the plugin wants.
	Subscriptions []string
	// SDKVersion identifies the plugin's SDK, for diagnostics.
	SDKVersion string
}

// Tool is a tool as its plugin describes it. A schema left empty is as
// the plugin sent it: the host supplies the defaults.
type Tool struct {
	Name, Title, Description, Toolset string
	InputSchema, OutputSchema         json.RawMessage
	// HonoursIdempotency: the tool keeps a call's idempotency key
	// (docs/decisions.md D32). TaskSupport is "", "optional" or "required".
	HonoursIdempotency bool
	TaskSupport        string
	// CallsTools: the tool's handler calls other areas' tools
	// (ToolCallback), so its calls get a tool channel.
	CallsTools bool
	// Annotations are the MCP tool annotations; nil when the plugin sent
	// none.
	Annotations *Annotations
}

// Annotations are a tool's MCP hints; an unset hint reads false.
type Annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	Title                                        string
}
