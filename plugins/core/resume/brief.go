// Package resume builds task_context's brief (docs/decisions.md D39): what
// an agent needs after a restart or a compacted context — its open tasks,
// their last decisions and blockers, their leases, unmet dependencies and
// its project's next actions — packed most important first into a byte
// budget the caller sets, with cairn:// links for what did not fit. It
// knows nothing of MCP: the core plugin gathers the parts and serves the
// result as a tool and as the resume prompt.
package resume

import (
	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// Budget bounds, in bytes of the brief's JSON. The default, 4,000 bytes
// (about 1,000 tokens, half a percent of a 200k-token window), holds a
// handful of tasks with their last decision, their leases and five next
// actions: what an agent reads first, before it opens anything by link.
// The minimum holds a task with its newest decision; the maximum is a
// sixteenth of a 200k-token window.
const (
	DefaultMaxBytes = 4000
	MinMaxBytes     = 1024
	MaxMaxBytes     = 65536
)

// DecisionsPerTask is how many of each task's last thought records the
// brief offers; ContentRunes clips each one's content (the full record is
// behind its task's trail link).
const (
	DecisionsPerTask = 3
	ContentRunes     = 280
)

// Decision is one thought record, clipped.
type Decision struct {
	ThoughtID  string `json:"thought_id"`
	Type       string `json:"type" jsonschema:"enum=reflection,enum=decision,enum=discovery,enum=risk,enum=blockers"`
	Content    string `json:"content"`
	RecordedAt string `json:"recorded_at"`
}

// Task is one of the caller's open tasks with its chain's tail.
type Task struct {
	tasks.MineTask
	Decisions []Decision `json:"decisions" description:"Newest first."`
	Blockers  []string   `json:"blockers,omitzero" description:"From the newest record listing any."`
	Trail     string     `json:"trail" description:"Resource with every record."`
}

// Omitted says what the budget left out; Links are cairn:// resources to
// read it from.
type Omitted struct {
	Tasks       int      `json:"tasks"`
	Decisions   int      `json:"decisions"`
	Leases      int      `json:"leases"`
	NextActions int      `json:"next_actions"`
	Links       []string `json:"links"`
}

// Brief is task_context's output.
type Brief struct {
	Agent       string             `json:"agent"`
	Project     string             `json:"project,omitempty"`
	Tasks       []Task             `json:"tasks"`
	Leases      []leases.Lease     `json:"leases"`
	NextActions []tasks.NextAction `json:"next_actions"`
	Omitted     Omitted            `json:"omitted"`
	Bytes       int                `json:"bytes" description:"Size of this brief's JSON."`
	MaxBytes    int                `json:"max_bytes"`
}
