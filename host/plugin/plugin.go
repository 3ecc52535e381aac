// Package plugin holds the host's own types for what crosses the plugin
// boundary besides tool calls (those are host/pipeline's Call and Outcome,
// and a described tool is a host/registry Tool): prompts, completions,
// resources, health, a plugin's description and its requests to ask a
// client. The host speaks to plugins in these types; only host/supervisor
// (the plugin boundary) and host/plugin/convert (the one converter) know
// the protocol's generated types (docs/decisions.md D34).
package plugin

import (
	"encoding/json"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Description is what a plugin says about itself at start-up, less its
// tools (the supervisor hands those over as registry tools).
type Description struct {
	Name, Version, Description string
	// ProtocolVersion is the protocol version the plugin implements.
	ProtocolVersion int
	// Subscriptions are the bus event patterns the plugin wants.
	Subscriptions []string
	// SDKVersion identifies the plugin's SDK, for diagnostics.
	SDKVersion string
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// Prompt is one of a plugin's MCP prompts.
type Prompt struct {
	Name, Title, Description string
	Arguments                []PromptArgument
}

// PromptMessage is one message of a rendered prompt: its text, or, when
// Content is set, that content block instead.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role    string
	Text    string
	Content *pipeline.Content
}

// PromptResult is a rendered prompt, or Err when the plugin could not
// render it (an unknown prompt: 404; a missing or invalid argument: 400).
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	Err         *errs.Error
}

// CompleteRequest asks a plugin to complete an argument of one of its
// prompts or resource templates (MCP completion/complete).
type CompleteRequest struct {
	// RefType is "prompt" or "resource"; RefName the prompt's name or the
	// template's URI.
	RefType, RefName string
	// Argument is the argument being completed and Value what the user
	// has typed so far.
	Argument, Value string
	// Context holds the values of arguments already filled in.
	Context map[string]string
}

// Completion is a plugin's answer to a CompleteRequest.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// Resource is one of a plugin's MCP resources.
type Resource struct {
	URI, Name, Description, MIMEType string
}

// ResourceTemplate is one of a plugin's MCP resource templates.
type ResourceTemplate struct {
	URITemplate, Name, Description, MIMEType string
}

// Resources is a plugin's resource listing.
type Resources struct {
	Resources []Resource
	Templates []ResourceTemplate
}

// ResourceContents is one part of a read resource: Text, or Blob for a
// binary one (Blob non-nil).
type ResourceContents struct {
	URI, MIMEType, Text string
	Blob                []byte
}

// ReadResult is a read resource, or Err when the plugin could not read it.
type ReadResult struct {
	Contents []ResourceContents
	Err      *errs.Error
}

// Health is a plugin's own view of its health.
type Health struct {
	// Status is "ok" or "degraded".
	Status, Message string
	// Details is a JSON object of plugin-specific details (empty: none).
	Details json.RawMessage
}

// Ask is a plugin's request to the MCP client of one of its running calls
// (sampling/createMessage or elicitation/create).
type Ask struct {
	// Channel is the client channel the call came with.
	Channel uint64
	Method  string
	// Params are the request's MCP params (JSON).
	Params json.RawMessage
}

// TaskRequest is an operation on a plugin's task (docs/decisions.md D39):
// Op is "get", "list", "cancel", "result" (which waits until the task
// ends) or "working" (every owner's working tasks, for the host alone).
// Caller is who asks: a plugin shows a task only to its owner.
type TaskRequest struct {
	Op, TaskID, Cursor string
	Caller             pipeline.Caller
}

// TaskResponse is a plugin's answer to a TaskRequest: Err when the task is
// unknown to the caller, expired or cannot be cancelled.
type TaskResponse struct {
	Task       *pipeline.TaskState
	Tasks      []pipeline.TaskState
	NextCursor string
	// Result is the tool's outcome of an ended task (op "result").
	Result *pipeline.Outcome
	Err    *errs.Error
}
