package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

// gated is a fixture whose current phase is 1 and whose gate is mode.
func gated(t *testing.T, mode string) *fixture {
	t.Helper()
	f := newFixture(t)
	if _, err := f.e.setStateValue(Call{Actor: "agent-1"}, "currentPhase", "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Gates(Call{Actor: "alice"}, GatesInput{Mode: strp(mode)}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) phase(t *testing.T) string {
	t.Helper()
	st, err := f.e.GetStats()
	if err != nil {
		t.Fatal(err)
	}
	return st.CurrentPhase
}

// setPhase is the agent's sdd_state set currentPhase.
func (f *fixture) setPhase(c Call, p string) error {
	_, err := f.e.StateTool(c, StateInput{Action: "set", KeyPath: "currentPhase", Value: json.RawMessage(`"` + p + `"`)})
	return err
}

func TestGatesModeIsSetByPeopleOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	out, err := f.e.Gates(Call{}, GatesInput{})
	if err != nil || out.Mode != GateOff || out.ChangedBy != "" {
		t.Fatalf("a fresh state's gates: %+v, %v; want off", out, err)
	}
	_, err = f.e.Gates(Call{Actor: "alice"}, GatesInput{Mode: strp("sometimes")})
	wantErr(t, err, 400, errs.InvalidInput, "mode")
	out, err = f.e.Gates(Call{Actor: "alice"}, GatesInput{Mode: strp(GateOn)})
	if err != nil || out.Mode != GateOn || out.ChangedBy != "alice" || out.ChangedAt == "" {
		t.Fatalf("set on: %+v, %v", out, err)
	}
	// Setting the same mode again changes nothing, not even who set it.
	if again, _ := f.e.Gates(Call{Actor: "bob"}, GatesInput{Mode: strp(GateOn)}); again != out {
		t.Fatalf("setting on again: %+v; want %+v", again, out)
	}

	// sdd_state writes only its values: an agent writing keys that look
	// like the gate's changes the values, never the gate.
	for _, key := range []string{"phaseGates", "phaseGates.mode", "gates", "mode", "gateMode"} {
		if _, err := f.e.StateTool(Call{Actor: "agent-1"}, StateInput{Action: "set", KeyPath: key, Value: json.RawMessage(`"off"`)}); err != nil {
			t.Fatalf("set %s: %v", key, err)
		}
		if _, err := f.e.StateTool(Call{Actor: "agent-1"}, StateInput{Action: "delete", KeyPath: key}); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
	}
	if got, _ := f.e.Gates(Call{}, GatesInput{}); got.Mode != GateOn {
		t.Fatalf("after the agent's writes the gate is %q; want on", got.Mode)
	}
	all, _ := f.e.StateTool(Call{}, StateInput{Action: "list"})
	if strings.Contains(string(all.Value), "alice") {
		t.Fatalf("sdd_state list shows the gate's record: %s", all.Value)
	}
}

func TestGateRefusesAMoveBeforeWriting(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{GateOn, GateStrict} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := gated(t, mode)
			err := f.setPhase(Call{Actor: "agent-1"}, "2")
			wantErr(t, err, 428, errs.ApprovalRequired, "")
			ee, _ := errs.As(err)
			d := ee.Details
			approve, _ := d["approve"].(map[string]any)
			args, _ := approve["args"].(map[string]any)
			if d["phase_from"] != "1" || d["phase_to"] != "2" || d["mode"] != mode || d["ask_client"] != (mode == GateOn) ||
				d["question"] != "Approve moving the sdd phase from “1” to “2”, asked by agent-1?" ||
				approve["tool"] != GateApproveTool || args["phase"] != "2" || !strings.Contains(d["where"].(string), "cairn sdd approve") {
				t.Fatalf("details %v", d)
			}
			if f.phase(t) != "1" {
				t.Fatalf("the refused move changed the phase to %s", f.phase(t))
			}
			if v, found, _ := f.e.GetStateValue("currentPhase"); !found || v != "1" {
				t.Fatalf("the refused move wrote the value %v", v)
			}
			reqs, _ := f.e.GateRequests()
			if len(reqs.Pending) != 1 || reqs.Pending[0] != (GateRequest{PhaseFrom: "1", PhaseTo: "2", RequestedBy: "agent-1", RequestedAt: reqs.Pending[0].RequestedAt, Mode: mode}) || reqs.Pending[0].RequestedAt == "" {
				t.Fatalf("pending %+v", reqs.Pending)
			}
			// Setting the same phase, or another key, is no move.
			if err := f.setPhase(Call{Actor: "agent-1"}, "1"); err != nil {
				t.Fatalf("setting the current phase again: %v", err)
			}
			if _, err := f.e.StateTool(Call{Actor: "agent-1"}, StateInput{Action: "set", KeyPath: "phases.2.notes", Value: json.RawMessage(`"x"`)}); err != nil {
				t.Fatalf("another key: %v", err)
			}
			// sdd_plan of another phase is a move too, refused before the
			// plan file is written.
			_, err = f.e.PlanTool(Call{Actor: "agent-1"}, PlanInput{Phase: "3"})
			wantErr(t, err, 428, errs.ApprovalRequired, "")
			if f.e.workspaceHas(planningRel + "/" + planFileName("3")) {
				t.Fatal("the refused plan was written")
			}
			// Planning the current phase again is no move.
			if _, err := f.e.PlanTool(Call{Actor: "agent-1"}, PlanInput{Phase: "1"}); err != nil {
				t.Fatalf("planning the current phase: %v", err)
			}
		})
	}
}

// A keyed call refused 428 keeps no outcome: the same call, sent again
// once a person approved, runs.
func TestGateRefusalIsNotAKeyedOutcome(t *testing.T) {
	t.Parallel()
	f := gated(t, GateOn)
	c := Call{Actor: "agent-1", Idem: idempotency.Key{Key: "k-1"}}
	wantErr(t, f.setPhase(c, "2"), 428, errs.ApprovalRequired, "")
	wantErr(t, f.setPhase(c, "2"), 428, errs.ApprovalRequired, "")
	if _, err := f.e.DecideGate(Call{Actor: "alice"}, GateApproveInput{Phase: "2", Decision: GateApprove, CompleteMove: boolp(false)}); err != nil {
		t.Fatal(err)
	}
	if f.phase(t) != "1" {
		t.Fatal("an approval without complete_move moved the phase")
	}
	if err := f.setPhase(c, "2"); err != nil {
		t.Fatalf("the same keyed call after the approval: %v", err)
	}
	if f.phase(t) != "2" {
		t.Fatalf("phase %s; want 2", f.phase(t))
	}
	// The approval was used up by the move: moving back and forth again
	// asks again.
	wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "1"), 428, errs.ApprovalRequired, "")
}

func TestGateDecisionRules(t *testing.T) {
	t.Parallel()
	type want struct {
		status int
		code   string
		field  string
	}
	cases := []struct {
		name    string
		mode    string
		request bool // the agent asked to move to 2 first
		by      string
		in      GateApproveInput
		want    want
	}{
		{"phase required", GateOn, true, "alice", GateApproveInput{Decision: GateApprove}, want{400, errs.InvalidInput, "phase"}},
		{"phase is a name", GateOn, true, "alice", GateApproveInput{Phase: "../x", Decision: GateApprove}, want{400, errs.InvalidInput, "phase"}},
		{"decision required", GateOn, true, "alice", GateApproveInput{Phase: "2"}, want{400, errs.InvalidInput, "decision"}},
		{"decision enum", GateOn, true, "alice", GateApproveInput{Phase: "2", Decision: "maybe"}, want{400, errs.InvalidInput, "decision"}},
		{"reject needs a reason", GateOn, true, "alice", GateApproveInput{Phase: "2", Decision: GateReject, Reason: strp("  ")}, want{400, errs.InvalidInput, "reason"}},
		{"reason bounded", GateOn, true, "alice", GateApproveInput{Phase: "2", Decision: GateReject, Reason: strp(strings.Repeat("x", MaxGateReason+1))}, want{400, errs.InvalidInput, "reason"}},
		{"via enum", GateOn, true, "alice", GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp("email")}, want{400, errs.InvalidInput, "via"}},
		{"gates off", GateOff, false, "alice", GateApproveInput{Phase: "2", Decision: GateApprove}, want{409, errs.Conflict, "phase"}},
		{"nothing asked", GateOn, false, "alice", GateApproveInput{Phase: "2", Decision: GateApprove}, want{409, errs.Conflict, "phase"}},
		{"the current phase", GateOn, true, "alice", GateApproveInput{Phase: "1", Decision: GateApprove}, want{409, errs.Conflict, "phase"}},
		{"the requester approves", GateOn, true, "agent-1", GateApproveInput{Phase: "2", Decision: GateApprove}, want{403, errs.Forbidden, "phase"}},
		{"the requester via the dashboard", GateOn, true, "agent-1", GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp(ViaDashboard)}, want{403, errs.Forbidden, "phase"}},
		{"strict refuses elicitation", GateStrict, true, "agent-1", GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp(ViaElicitation)}, want{403, errs.Forbidden, "via"}},
		{"strict refuses input requests", GateStrict, true, "bob", GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp(ViaInputRequest)}, want{403, errs.Forbidden, "via"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := gated(t, tc.mode)
			if tc.request {
				wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "2"), 428, errs.ApprovalRequired, "")
			}
			_, err := f.e.DecideGate(Call{Actor: tc.by}, tc.in)
			wantErr(t, err, tc.want.status, tc.want.code, tc.want.field)
			if tc.want.status == 403 && tc.want.field == "phase" {
				if ee, _ := errs.As(err); ee.Details["required"] != "another person" {
					t.Fatalf("details %v; want required another person", ee.Details)
				}
			}
			if f.phase(t) != "1" {
				t.Fatalf("a refused decision moved the phase to %s", f.phase(t))
			}
		})
	}
}

func TestGateApprovalMovesThePhase(t *testing.T) {
	t.Parallel()
	f := gated(t, GateOn)
	wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "2"), 428, errs.ApprovalRequired, "")
	out, err := f.e.DecideGate(Call{Actor: "alice"}, GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp(ViaDashboard)})
	if err != nil {
		t.Fatal(err)
	}
	if out.PhaseFrom != "1" || out.PhaseTo != "2" || out.State != "approved" || out.By != "alice" || out.Via != ViaDashboard ||
		out.RequestedBy != "agent-1" || out.CurrentPhase != "2" || !out.Moved || out.Mode != GateOn {
		t.Fatalf("decision %+v", out)
	}
	if f.phase(t) != "2" {
		t.Fatalf("phase %s; want 2", f.phase(t))
	}
	if reqs, _ := f.e.GateRequests(); len(reqs.Pending) != 0 {
		t.Fatalf("still pending: %+v", reqs.Pending)
	}
	_, err = f.e.DecideGate(Call{Actor: "alice"}, GateApproveInput{Phase: "2", Decision: GateApprove})
	wantErr(t, err, 409, errs.Conflict, "phase")
	h, _ := f.e.GateHistory()
	if len(h) != 1 || h[0].By != "alice" || h[0].PhaseTo != "2" || h[0].Decision != GateApprove || !h[0].Moved || h[0].RequestedBy != "agent-1" {
		t.Fatalf("history %+v", h)
	}
	if !slicesHas(f.evs.types(), EventGateRequested) || !slicesHas(f.evs.types(), EventGateDecided) || !slicesHas(f.evs.types(), EventGateModeChanged) {
		t.Fatalf("events %v", f.evs.types())
	}
	// The dashboard's text shows the gate and the decision.
	text, err := f.e.GenerateDashboard("text")
	if err != nil || !strings.Contains(text.(string), "Phase gates: on") || !strings.Contains(text.(string), "approve 1 → 2 by alice via dashboard") {
		t.Fatalf("dashboard text:\n%v", text)
	}
}

func TestGateRejectionIsShownToTheAgent(t *testing.T) {
	t.Parallel()
	f := gated(t, GateOn)
	wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "2"), 428, errs.ApprovalRequired, "")
	// The requester may reject its own request.
	out, err := f.e.DecideGate(Call{Actor: "agent-1"}, GateApproveInput{Phase: "2", Decision: GateReject, Reason: strp(" finish the tests ")})
	if err != nil || out.State != "rejected" || out.Reason != "finish the tests" || out.Moved {
		t.Fatalf("rejection %+v, %v", out, err)
	}
	if reqs, _ := f.e.GateRequests(); len(reqs.Pending) != 0 {
		t.Fatalf("a rejected request is pending: %+v", reqs.Pending)
	}
	err = f.setPhase(Call{Actor: "agent-1"}, "2")
	wantErr(t, err, 428, errs.ApprovalRequired, "")
	ee, _ := errs.As(err)
	rej, _ := ee.Details["rejected"].(map[string]any)
	if rej["by"] != "agent-1" || rej["reason"] != "finish the tests" || rej["at"] == "" || !strings.Contains(ee.Message, "finish the tests") {
		t.Fatalf("the next refusal: %s %v", ee.Message, ee.Details)
	}
	// Asked again, it is pending again, with the last rejection.
	reqs, _ := f.e.GateRequests()
	if len(reqs.Pending) != 1 || reqs.Pending[0].LastRejection != "finish the tests" {
		t.Fatalf("pending %+v", reqs.Pending)
	}
}

// The person at the agent's client approves the agent's own request: the
// record names them apart from the agent; without complete_move the
// agent's retried call makes the move.
func TestGateApprovalAtTheClient(t *testing.T) {
	t.Parallel()
	f := gated(t, GateOn)
	wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "2"), 428, errs.ApprovalRequired, "")
	out, err := f.e.DecideGate(Call{Actor: "agent-1"}, GateApproveInput{Phase: "2", Decision: GateApprove, Via: strp(ViaElicitation), CompleteMove: boolp(false)})
	if err != nil || out.By != "agent-1 (person at the client)" || out.Moved || out.CurrentPhase != "1" {
		t.Fatalf("decision %+v, %v", out, err)
	}
	if err := f.setPhase(Call{Actor: "agent-1"}, "2"); err != nil || f.phase(t) != "2" {
		t.Fatalf("the retried move: %v, phase %s", err, f.phase(t))
	}
}

func TestGateOffLetsMovesThrough(t *testing.T) {
	t.Parallel()
	f := gated(t, GateOn)
	wantErr(t, f.setPhase(Call{Actor: "agent-1"}, "2"), 428, errs.ApprovalRequired, "")
	if _, err := f.e.Gates(Call{Actor: "alice"}, GatesInput{Mode: strp(GateOff)}); err != nil {
		t.Fatal(err)
	}
	if err := f.setPhase(Call{Actor: "agent-1"}, "2"); err != nil || f.phase(t) != "2" {
		t.Fatalf("with the gate off: %v, phase %s", err, f.phase(t))
	}
	if _, err := f.e.PlanTool(Call{Actor: "agent-1"}, PlanInput{Phase: "3"}); err != nil || f.phase(t) != "3" {
		t.Fatalf("plan with the gate off: %v, phase %s", err, f.phase(t))
	}
}

func TestGateRequestsAreBounded(t *testing.T) {
	t.Parallel()
	g := &gateState{Requests: map[string]gateRequest{}}
	base := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	for i := range maxGateRequests + 5 {
		to := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		st := gatePending
		if i%2 == 0 {
			st = gateRejected
		}
		g.Requests[to] = gateRequest{To: to, State: st, RequestedAt: iso(base.Add(time.Duration(i) * time.Second))}
	}
	boundRequests(g)
	if len(g.Requests) != maxGateRequests {
		t.Fatalf("%d requests kept; want %d", len(g.Requests), maxGateRequests)
	}
	pending := 0
	for _, r := range g.Requests {
		if r.State == gatePending {
			pending++
		}
	}
	if pending != (maxGateRequests+5)/2 {
		t.Fatalf("%d pending kept; decided ones go first", pending)
	}
}

// Evolution's write_plan of a phase other than the current one moves the
// phase too, so the gate holds it; the current phase's plan it still
// writes.
func TestGateHoldsEvolutionsPhaseMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, p := range []string{"2", "1"} {
		if err := f.setPhase(Call{Actor: "agent-1"}, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.e.Gates(Call{Actor: "alice"}, GatesInput{Mode: strp(GateOn)}); err != nil {
		t.Fatal(err)
	}
	_, err := f.e.ApplyEvolution("missing-plan-2", false)
	wantErr(t, err, 428, errs.ApprovalRequired, "")
	if f.phase(t) != "1" || f.e.workspaceHas(planningRel+"/"+planFileName("2")) {
		t.Fatalf("the held move changed phase %s or wrote the plan", f.phase(t))
	}
	if res, err := f.e.ApplyEvolution("missing-plan-1", false); err != nil || !res.Success {
		t.Fatalf("the current phase's plan: %+v, %v", res, err)
	}
}
