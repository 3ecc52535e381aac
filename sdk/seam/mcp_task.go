package seam

import "github.com/cairn-mcp/cairn/sdk/errs"

// TaskRequest is an operation on a plugin's MCP task (docs/decisions.md D39):
// Op is "get", "list", "cancel", "result" (which waits until the task
// ends) or "working" (every owner's working tasks, for the host alone).
// Caller is who asks: a plugin shows a task only to its owner.
type TaskRequest struct {
	Op, TaskID, Cursor string
	Caller             Caller
}

// TaskResponse is a plugin's answer to a TaskRequest: Err when the task is
// unknown to the caller, expired or cannot be cancelled.
type TaskResponse struct {
	Task       *TaskState
	Tasks      []TaskState
	NextCursor string
	// Result is the tool's outcome of an ended task (op "result").
	Result *Result
	Err    *errs.Error
}
