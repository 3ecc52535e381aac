package ui

// The pending-approvals page (docs/decisions.md D45): the tasks whose move
// to done waits for a person, with Approve and Reject. Both tools are the
// core area's internal ones (task_approvals, task_approve), which no agent
// session lists; the dashboard reaches them through CallInternal as the
// logged-in person, and the core area refuses the person who asked.

import (
	"context"
	"net/http"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// pendingApproval is one row of task_approvals.
type pendingApproval struct {
	TaskID      string `json:"task_id"`
	Title       string `json:"title"`
	Project     string `json:"project"`
	Mode        string `json:"mode"`
	Status      string `json:"status"`
	RequestedBy string `json:"requested_by"`
	RequestedAt string `json:"requested_at"`
}

// approvalsView is the approvals page's data.
type approvalsView struct {
	Project string
	Pending []pendingApproval
	// Phases are the sdd phase moves that wait (approvals_sdd.go).
	Phases phaseMoves
}

// pendingApprovals lists what waits for a person, in one project or all.
func (s *Server) pendingApprovals(ctx context.Context, g Grant, project string) ([]pendingApproval, *errs.Error) {
	args := map[string]any{}
	if project != "" {
		args["project"] = project
	}
	var out struct {
		Pending []pendingApproval `json:"pending"`
	}
	if e := s.callInternal(ctx, g, "task_approvals", args, &out); e != nil {
		return nil, e
	}
	return out.Pending, nil
}

// apiPendingCount answers the navigation's badge: how many approvals wait
// for a person, in every project. The page asks for it after it renders,
// so no page waits on it.
func (s *Server) apiPendingCount(w http.ResponseWriter, r *http.Request) {
	p, e := s.pendingApprovals(r.Context(), grantFrom(r.Context()), "")
	if e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, map[string]int{"pending": len(p) + len(s.pendingPhaseMoves(r.Context(), grantFrom(r.Context())).Pending)})
}

func (s *Server) approvalsData(r *http.Request, g Grant) (any, *errs.Error) {
	v := approvalsView{Project: strings.TrimSpace(r.URL.Query().Get("project"))}
	p, e := s.pendingApprovals(r.Context(), g, v.Project)
	v.Pending = p
	if e == nil && v.Project == "" {
		v.Phases = s.pendingPhaseMoves(r.Context(), g)
	}
	return v, e
}

// approvalInput is what the page's Approve and Reject buttons post.
type approvalInput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// apiApprove decides a pending approval as the logged-in person.
func (s *Server) apiApprove(w http.ResponseWriter, r *http.Request) {
	g, in, ok := readPersonPost[approvalInput](w, r, "decision")
	if !ok {
		return
	}
	args, e := in.args(r.PathValue("id"))
	if e != nil {
		writeErr(w, e)
		return
	}
	var out map[string]any
	if e := s.callInternal(r.Context(), g, "task_approve", args, &out); e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, out)
}

// args is task_approve's input: a rejection must say why, here already,
// beside the reason field.
func (in approvalInput) args(taskID string) (map[string]any, *errs.Error) {
	switch in.Decision {
	case "approve":
		return map[string]any{"task_id": taskID, "decision": "approve", "via": "dashboard"}, nil
	case "reject":
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			return nil, errs.Invalid("reason", "required", "a rejection needs a reason: what the agent must change")
		}
		return map[string]any{"task_id": taskID, "decision": "reject", "reason": reason, "via": "dashboard"}, nil
	case "":
		return nil, errs.Invalid("decision", "required", "give a decision: approve or reject")
	default:
		return nil, errs.Invalidf("decision", "enum", "decision %q is not approve or reject", in.Decision)
	}
}
