package ui

import (
	"net/http"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// actionInput is what a page posts to act on a task.
type actionInput struct {
	Action   string `json:"action"` // move, block, assign, comment
	Status   string `json:"status,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Assignee string `json:"assignee,omitempty"`
	Content  string `json:"content,omitempty"`
}

// toolCall turns a page action into the tool call that performs it, or a
// typed refusal naming the field.
func (a actionInput) toolCall(taskID string) (string, map[string]any, *errs.Error) {
	switch a.Action {
	case "move":
		if a.Status == "" {
			return "", nil, errs.Invalid("status", "required", "move needs the target status")
		}
		if a.Status == "blocked" {
			return "", nil, errs.Invalid("action", "enum", "moving to blocked needs a reason: use the block action")
		}
		return "task_update", map[string]any{"task_id": taskID, "status": a.Status}, nil
	case "block":
		if strings.TrimSpace(a.Reason) == "" {
			return "", nil, errs.Invalid("reason", "required", "blocking a task needs a reason")
		}
		return "task_update", map[string]any{"task_id": taskID, "status": "blocked", "blocked_reason": a.Reason}, nil
	case "assign":
		if strings.TrimSpace(a.Assignee) == "" {
			return "", nil, errs.Invalid("assignee", "required", "assign needs an assignee")
		}
		return "task_update", map[string]any{"task_id": taskID, "assignee": strings.TrimSpace(a.Assignee)}, nil
	case "comment":
		if strings.TrimSpace(a.Content) == "" {
			return "", nil, errs.Invalid("content", "required", "a comment needs content")
		}
		return "thought_record", map[string]any{"task_id": taskID, "type": "reflection", "content": a.Content}, nil
	case "":
		return "", nil, errs.Invalid("action", "required", "give an action: move, block, assign or comment")
	default:
		return "", nil, errs.Invalidf("action", "enum", "action %q is not one of move, block, assign, comment", a.Action)
	}
}

// apiAction performs an action as the logged-in person, only when the
// login allowed actions (read-only by default).
func (s *Server) apiAction(w http.ResponseWriter, r *http.Request) {
	g, in, ok := readPersonPost[actionInput](w, r, "action")
	if !ok {
		return
	}
	name, args, e := in.toolCall(r.PathValue("id"))
	if e != nil {
		writeErr(w, e)
		return
	}
	var out map[string]any
	if e := s.call(r.Context(), g, name, args, &out); e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, out)
}
