package seam

import (
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Call is one tool call as it crosses to a plugin: what the plugin is
// asked to run, and how (docs/decisions.md D34).
type Call struct {
	// Tool is the tool's name and Args its arguments (a JSON object).
	Tool   string
	Args   json.RawMessage
	Caller Caller
	// RequestID is the host's id for the call.
	RequestID string
	// IdempotencyKey identifies the call across a daemon restart; Replay
	// marks a call that may already have run. IdempotencyClient is true
	// when the key is the client's own (docs/decisions.md D42).
	IdempotencyKey    string
	IdempotencyClient bool
	Replay            bool
	// WantsProgress asks for the call's progress reports, and LogLevel
	// (empty: none) for its log lines for the client at that level or
	// above.
	WantsProgress bool
	LogLevel      string
	// ClientChannel lets the plugin ask the call's client (sampling,
	// elicitation) while the call runs; 0 when it may not.
	ClientChannel uint64
	// ToolChannel lets the plugin call other areas' tools as the call's
	// caller while the call runs (ToolCallback); 0 when its tool did not
	// declare that it calls tools.
	ToolChannel uint64
	// Task, when set, asks the plugin to run the call as a task
	// (docs/decisions.md D39).
	Task *TaskParams
	// TraceParent and TraceState are the W3C trace context the plugin's
	// span for the call hangs under (docs/decisions.md D38).
	TraceParent, TraceState string
}

// TaskParams asks for a call to run as an MCP task; TTL is the client's wish
// (zero: the plugin's default).
type TaskParams struct {
	TTL time.Duration
}

// Result is the outcome of a call: Output on success, Err otherwise.
type Result struct {
	Output  json.RawMessage
	Err     *errs.Error
	Status  int
	Content []Content
	// Task is the task a task-augmented call started, instead of Output.
	Task *TaskState
}

// Content is an MCP content block: an extra block of a tool result, or
// the content of a prompt message.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource" (an
	// embedded resource).
	Type string
	// Text is a text block's text, a resource_link's name, or a text
	// embedded resource's contents.
	Text string
	// Data is an image's or audio clip's bytes, or a binary embedded
	// resource's contents (sent base64-encoded).
	Data     []byte
	MIMEType string
	// URI is a resource_link's target or an embedded resource's URI.
	URI string
}

// TaskState is an MCP task as its plugin keeps it.
type TaskState struct {
	ID, Tool, Status, StatusMessage string
	// CreatedAt and UpdatedAt are RFC 3339 times.
	CreatedAt, UpdatedAt string
	TTL, PollInterval    time.Duration
	// Interrupted: the process running the task ended before it did.
	Interrupted bool
}

// Progress is one progress report of a running call.
type Progress struct {
	Progress, Total float64
	Message         string
}

// LogLine is one log line a running call sends its client.
type LogLine struct {
	Level, Logger string
	Data          json.RawMessage
}
