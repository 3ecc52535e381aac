package ui

// The sdd phase moves on the pending-approvals page (docs/decisions.md
// D45): with the sdd phase gate on, an agent's move of the phase waits for
// a person beside the tasks' moves to done. Both tools are the sdd area's
// internal ones (sdd_gate_requests, sdd_gate_approve), reached through
// CallInternal as the logged-in person; the sdd area refuses the person
// who asked.

import (
	"context"
	"net/http"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// pendingPhaseMove is one row of sdd_gate_requests.
type pendingPhaseMove struct {
	PhaseFrom     string `json:"phase_from"`
	PhaseTo       string `json:"phase_to"`
	Mode          string `json:"mode"`
	RequestedBy   string `json:"requested_by"`
	RequestedAt   string `json:"requested_at"`
	LastRejection string `json:"last_rejection"`
}

// phaseMoves is the page's phase section: the moves that wait, or why
// they could not be listed (the sdd area may be off; the tasks still
// show).
type phaseMoves struct {
	Pending []pendingPhaseMove
	Problem string
}

// pendingPhaseMoves lists the sdd phase moves that wait for a person.
func (s *Server) pendingPhaseMoves(ctx context.Context, g Grant) phaseMoves {
	var out struct {
		Pending []pendingPhaseMove `json:"pending"`
	}
	if e := s.callInternal(ctx, g, "sdd_gate_requests", map[string]any{}, &out); e != nil {
		return phaseMoves{Problem: e.Message}
	}
	return phaseMoves{Pending: out.Pending}
}

// apiGateApprove decides a waiting phase move as the logged-in person.
func (s *Server) apiGateApprove(w http.ResponseWriter, r *http.Request) {
	g, in, ok := readPersonPost[approvalInput](w, r, "decision")
	if !ok {
		return
	}
	args, e := in.gateArgs(r.PathValue("phase"))
	if e != nil {
		writeErr(w, e)
		return
	}
	var out map[string]any
	if e := s.callInternal(r.Context(), g, "sdd_gate_approve", args, &out); e != nil {
		writeErr(w, e)
		return
	}
	writeJSON(w, 200, out)
}

// gateArgs is sdd_gate_approve's input, checked as task_approve's is.
func (in approvalInput) gateArgs(phase string) (map[string]any, *errs.Error) {
	args, e := in.args("")
	if e != nil {
		return nil, e
	}
	delete(args, "task_id")
	args["phase"] = phase
	return args, nil
}
