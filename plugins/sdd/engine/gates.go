package engine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/cairn-mcp/cairn/internal/approval"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Phase gates (docs/decisions.md D45): people steer, agents follow. With
// the gate on (or strict) a move of the current phase waits for a
// person's approval, the way a task's move to done does in a project with
// approval on. The mode, the requests and the decisions live in the
// state's phaseGates section, which sdd_state (it reads and writes only
// the values section) can neither reach nor change: an agent cannot switch
// its own gate off. Only the internal tools sdd_gates, sdd_gate_approve
// and sdd_gate_requests change or read it, and no agent session lists
// them.

// Gate modes.
const (
	GateOff    = approval.Off
	GateOn     = approval.On
	GateStrict = approval.Strict
)

// GateModes lists the modes, in the order help shows them.
var GateModes = approval.Modes

// Gate decisions, request states and the places a person decides.
const (
	GateApprove = approval.Approve
	GateReject  = approval.Reject

	gatePending  = "pending"
	gateApproved = "approved"
	gateRejected = "rejected"

	ViaDashboard    = approval.ViaDashboard
	ViaCLI          = approval.ViaCLI
	ViaElicitation  = approval.ViaElicitation
	ViaInputRequest = approval.ViaInputRequest
)

// GateVias lists where a person may decide.
var GateVias = approval.Vias

// GateApproveTool is the internal tool a gate's 428 names to record a
// person's answer (the host's approval bridge calls it).
const GateApproveTool = "sdd_gate_approve"

// Gate events (D19).
const (
	EventGateModeChanged = "sdd.gate.mode_changed"
	EventGateRequested   = "sdd.gate.requested"
	EventGateDecided     = "sdd.gate.decided"
)

// Bounds of the gate section.
const (
	// MaxGateReason bounds a decision's reason, in characters.
	MaxGateReason = approval.MaxReason
	// MaxGateHistory bounds the recorded decisions (oldest dropped).
	MaxGateHistory = 200
	// maxGateRequests bounds the requests kept, one per target phase;
	// decided ones are dropped first.
	maxGateRequests = 64
)

// gateState is the state's phaseGates section.
type gateState struct {
	Mode      string `json:"mode,omitempty"`
	ChangedBy string `json:"changedBy,omitempty"`
	ChangedAt string `json:"changedAt,omitempty"`
	// Requests are the refused moves, by the phase they move to.
	Requests map[string]gateRequest `json:"requests,omitempty"`
	// History is the people's decisions, oldest first.
	History []GateDecision `json:"history,omitempty"`
}

// gateRequest is an agent's refused move and a person's last decision on
// it. A rejected request asked again is pending again and keeps the
// rejection, so the agent keeps seeing why.
type gateRequest struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Mode        string `json:"mode"`
	RequestedBy string `json:"requestedBy"`
	RequestedAt string `json:"requestedAt"`
	State       string `json:"state"`
	Decision    string `json:"decision,omitempty"`
	DecidedBy   string `json:"decidedBy,omitempty"`
	DecidedAt   string `json:"decidedAt,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Via         string `json:"via,omitempty"`
}

// GateDecision is one decision as the state's gate history keeps it.
type GateDecision struct {
	PhaseFrom   string `json:"phase_from"`
	PhaseTo     string `json:"phase_to"`
	Decision    string `json:"decision"`
	By          string `json:"by"`
	At          string `json:"at"`
	Via         string `json:"via"`
	Reason      string `json:"reason,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
	// Moved says the decision itself moved the phase.
	Moved bool `json:"moved"`
}

func (s *state) gateMode() string {
	if s.Gates == nil || s.Gates.Mode == "" {
		return GateOff
	}
	return s.Gates.Mode
}

func (s *state) gates() *gateState {
	if s.Gates == nil {
		s.Gates = &gateState{}
	}
	if s.Gates.Requests == nil {
		s.Gates.Requests = map[string]gateRequest{}
	}
	return s.Gates
}

// gateRefusal is the 428 of a phase move that waits for a person, with
// what its pending request records. The refused write changes nothing, so
// a keyed call keeps no outcome and the same call, retried once a person
// approved, runs again; the request is written after, in a write of its
// own (requestGate).
type gateRefusal struct {
	err                   *errs.Error
	from, to, mode, actor string
}

func (r *gateRefusal) Error() string { return r.err.Error() }

// gateMove decides, inside a write and before it changes anything,
// whether actor's move of the current phase to `to` waits for a person.
// A move the gate lets through consumes the approval that allowed it.
func gateMove(s *state, to, actor string) error {
	from := s.Project.CurrentPhase
	mode := s.gateMode()
	if mode == GateOff || to == from {
		return nil
	}
	r, found := s.Gates.Requests[to]
	if found && r.State == gateApproved {
		return nil
	}
	return &gateRefusal{err: gateRequired(from, to, mode, actor, r), from: from, to: to, mode: mode, actor: actor}
}

// phaseMoved is called by a write that made `to` the current phase: an
// approval for it is used up.
func phaseMoved(s *state, to string) {
	if s.Gates != nil {
		delete(s.Gates.Requests, to)
	}
}

// phaseLabel names a phase in a question; none before the first.
func phaseLabel(p string) string {
	if p == "" {
		return "(none)"
	}
	return p
}

// gateWhere is where a person decides.
const gateWhere = "the dashboard's Approvals page (cairn ui --allow-actions) or `cairn sdd approve`"

// gateRequired is the refusal the agent reads: where a person approves,
// the question the host may put to the person at the client, and the
// internal tool that records the answer. A last rejection rides along.
func gateRequired(from, to, mode, actor string, r gateRequest) *errs.Error {
	msg := fmt.Sprintf("moving the sdd phase from %s to %s needs a person's approval (phase gates %s): a person approves it in %s; then send this call again",
		phaseLabel(from), to, mode, gateWhere)
	if r.Decision == GateReject {
		msg += fmt.Sprintf(". It was last rejected by %s: %s", r.DecidedBy, r.Reason)
	}
	e := errs.New(428, errs.ApprovalRequired, msg).
		With("phase_from", from).
		With("phase_to", to).
		With("mode", mode).
		With("ask_client", mode == GateOn).
		With("question", fmt.Sprintf("Approve moving the sdd phase from “%s” to “%s”, asked by %s?", phaseLabel(from), to, actor)).
		With("approve", map[string]any{"tool": GateApproveTool, "args": map[string]any{"phase": to}}).
		With("where", gateWhere)
	if r.Decision == GateReject {
		e = e.With("rejected", map[string]any{"by": r.DecidedBy, "at": r.DecidedAt, "reason": r.Reason})
	}
	return e
}

// refusedForGate turns a refused write into the 428 it answers, recording
// its pending request first; any other error comes back as it is.
func (e *Engine) refusedForGate(err error) error {
	var r *gateRefusal
	if !errors.As(err, &r) {
		return err
	}
	if werr := e.requestGate(r); werr != nil {
		return werr
	}
	return r.err
}

// requestGate records r's pending request so people see it
// (sdd_gate_requests, the dashboard), unless a person approved meanwhile,
// the gate was turned off, or the same request already waits.
func (e *Engine) requestGate(r *gateRefusal) error {
	return e.write(func(s *state, now time.Time, emit func(string, any)) error {
		if s.gateMode() == GateOff {
			return errUnchanged
		}
		g := s.gates()
		cur, found := g.Requests[r.to]
		if found && (cur.State == gateApproved || cur.State == gatePending && cur.RequestedBy == r.actor && cur.From == r.from) {
			return errUnchanged
		}
		cur.From, cur.To, cur.Mode, cur.RequestedBy, cur.RequestedAt, cur.State = r.from, r.to, r.mode, r.actor, iso(now), gatePending
		g.Requests[r.to] = cur
		boundRequests(g)
		emit(EventGateRequested, map[string]any{"phase_from": r.from, "phase_to": r.to, "mode": r.mode, "requested_by": r.actor})
		return nil
	})
}

// boundRequests keeps at most maxGateRequests requests, dropping decided
// ones first, oldest first.
func boundRequests(g *gateState) {
	for len(g.Requests) > maxGateRequests {
		victim, victimAt, victimPending := "", "", true
		for to, r := range g.Requests {
			pending := r.State == gatePending
			if victim == "" || (!pending && victimPending) || (pending == victimPending && r.RequestedAt < victimAt) {
				victim, victimAt, victimPending = to, r.RequestedAt, pending
			}
		}
		delete(g.Requests, victim)
	}
}

// checkGate refuses, before a write that would move the current phase to
// `to` (a plan written to the workspace first), a move the gate holds
// back; the write itself checks again.
func (e *Engine) checkGate(actor, to string) error {
	var refused error
	if err := e.read(func(s *state, _ time.Time) error {
		refused = gateMove(s, to, actor)
		return nil
	}); err != nil {
		return err
	}
	return e.refusedForGate(refused)
}

// actorOrUnknown names a caller the SDK did not name.
func actorOrUnknown(actor string) string {
	if actor == "" {
		return "unknown"
	}
	return actor
}

// GatesInput is sdd_gates' input: no mode reads it.
type GatesInput struct {
	Mode *string `json:"mode,omitempty"`
}

// GatesOutput is sdd_gates' output.
type GatesOutput struct {
	Mode      string `json:"mode" jsonschema:"enum=off,enum=on,enum=strict"`
	ChangedBy string `json:"changed_by,omitempty"`
	ChangedAt string `json:"changed_at,omitempty"`
}

// Gates reads the gate mode or, with in.Mode, sets it for c's caller.
func (e *Engine) Gates(c Call, in GatesInput) (GatesOutput, error) {
	read := func(s *state) GatesOutput {
		out := GatesOutput{Mode: s.gateMode()}
		if s.Gates != nil {
			out.ChangedBy, out.ChangedAt = s.Gates.ChangedBy, s.Gates.ChangedAt
		}
		return out
	}
	var out GatesOutput
	if in.Mode == nil {
		err := e.read(func(s *state, _ time.Time) error {
			out = read(s)
			return nil
		})
		return out, err
	}
	mode := *in.Mode
	if !slices.Contains(GateModes, mode) {
		return out, errs.Invalidf("mode", "enum", "mode %q is not one of off, on, strict", mode)
	}
	actor := actorOrUnknown(c.Actor)
	out, _, err := writeKeyed(e, keyFor(c, "gates", in), func(s *state, now time.Time, emit func(string, any)) (GatesOutput, error) {
		if s.gateMode() == mode {
			out = read(s)
			return out, errUnchanged
		}
		g := s.gates()
		from := s.gateMode()
		g.Mode, g.ChangedBy, g.ChangedAt = mode, actor, iso(now)
		emit(EventGateModeChanged, map[string]any{"mode": mode, "previous_mode": from, "changed_by": actor})
		return read(s), nil
	})
	return out, err
}

// GateApproveInput is sdd_gate_approve's input.
type GateApproveInput struct {
	Phase    string  `json:"phase"`
	Decision string  `json:"decision"`
	Reason   *string `json:"reason,omitempty"`
	// Via is where the person decided; default cli.
	Via *string `json:"via,omitempty"`
	// CompleteMove makes an approved phase current at once (default
	// true); the host's bridge sends false and repeats the agent's own
	// call instead.
	CompleteMove *bool `json:"complete_move,omitempty"`
}

// GateApproveOutput is sdd_gate_approve's output: the decision as
// recorded and the current phase after it.
type GateApproveOutput struct {
	PhaseFrom    string `json:"phase_from"`
	PhaseTo      string `json:"phase_to"`
	Mode         string `json:"mode" jsonschema:"enum=on,enum=strict"`
	Decision     string `json:"decision" jsonschema:"enum=approve,enum=reject"`
	State        string `json:"state" jsonschema:"enum=approved,enum=rejected"`
	By           string `json:"by"`
	At           string `json:"at"`
	Via          string `json:"via" jsonschema:"enum=dashboard,enum=cli,enum=elicitation,enum=input_request"`
	Reason       string `json:"reason,omitempty"`
	RequestedBy  string `json:"requested_by"`
	CurrentPhase string `json:"current_phase"`
	// Moved says this decision made phase_to the current phase.
	Moved bool `json:"moved"`
}

func (in *GateApproveInput) validate() (approval.Checked, error) {
	if err := CheckPhase(in.Phase); err != nil {
		return approval.Checked{}, err
	}
	return approval.Decision{Decision: in.Decision, Reason: in.Reason, Via: in.Via, CompleteMove: in.CompleteMove}.Check()
}

// DecideGate runs sdd_gate_approve for c's caller: it records a person's
// decision on the move to in.Phase, in the state's gate history, and with
// an approval and complete_move makes the phase current, in one write.
func (e *Engine) DecideGate(c Call, in GateApproveInput) (GateApproveOutput, error) {
	a, err := in.validate()
	if err != nil {
		return GateApproveOutput{}, err
	}
	actor := actorOrUnknown(c.Actor)
	out, _, err := writeKeyed(e, keyFor(c, "gate.approve", in), func(s *state, now time.Time, emit func(string, any)) (GateApproveOutput, error) {
		return decideGate(s, actor, in.Phase, in.Decision, a, now, emit)
	})
	return out, err
}

func decideGate(s *state, actor, phase, decision string, a approval.Checked, now time.Time, emit func(string, any)) (GateApproveOutput, error) {
	mode := s.gateMode()
	if mode == GateOff {
		return GateApproveOutput{}, errs.Conflictf(errs.Conflict, "phase gates are off, so there is nothing to decide; turn them on with `cairn sdd gates on`").
			With("field", "phase").With("mode", mode)
	}
	r, found := s.Gates.Requests[phase]
	if !found || r.State == gateApproved || phase == s.Project.CurrentPhase {
		why := "no move to it waits for a person"
		switch {
		case phase == s.Project.CurrentPhase:
			why = "it is already the current phase"
		case found:
			why = "its move is already approved"
		}
		return GateApproveOutput{}, errs.Conflictf(errs.Conflict, "there is nothing to decide on phase %s: %s", phase, why).
			With("field", "phase").With("current_phase", s.Project.CurrentPhase)
	}
	approver, err := a.Approver(actor, r.RequestedBy, mode, approval.Held{Field: "phase", Move: "moving the sdd phase to " + phase, Command: "cairn sdd approve " + phase})
	if err != nil {
		return GateApproveOutput{}, err
	}
	at := iso(now)
	from := s.Project.CurrentPhase
	state := gateApproved
	if decision == GateReject {
		state = gateRejected
	}
	r.State, r.Decision, r.DecidedBy, r.DecidedAt, r.Reason, r.Via = state, decision, approver, at, a.Reason, a.Via
	g := s.gates()
	g.Requests[phase] = r
	moved := decision == GateApprove && a.CompleteMove
	if moved {
		s.Project.CurrentPhase = phase
		if _, known := s.Project.Phases[phase]; !known {
			s.Project.Phases[phase] = PhaseRecord{Phase: phase, PlanFile: planFileName(phase)}
		}
		phaseMoved(s, phase)
	}
	g.History = append(g.History, GateDecision{PhaseFrom: from, PhaseTo: phase, Decision: decision, By: approver, At: at, Via: a.Via, Reason: a.Reason, RequestedBy: r.RequestedBy, Moved: moved})
	if n := len(g.History); n > MaxGateHistory {
		g.History = append([]GateDecision(nil), g.History[n-MaxGateHistory:]...)
	}
	emit(EventGateDecided, map[string]any{"phase_from": from, "phase_to": phase, "decision": decision, "by": approver, "via": a.Via, "moved": moved, "current_phase": s.Project.CurrentPhase})
	return GateApproveOutput{
		PhaseFrom: from, PhaseTo: phase, Mode: mode, Decision: decision, State: state, By: approver, At: at, Via: a.Via,
		Reason: a.Reason, RequestedBy: r.RequestedBy, CurrentPhase: s.Project.CurrentPhase, Moved: moved,
	}, nil
}

// GateRequest is one pending request as sdd_gate_requests lists it.
type GateRequest struct {
	PhaseFrom   string `json:"phase_from"`
	PhaseTo     string `json:"phase_to"`
	RequestedBy string `json:"requested_by"`
	RequestedAt string `json:"requested_at"`
	Mode        string `json:"mode" jsonschema:"enum=on,enum=strict"`
	// LastRejection is the reason of a rejection the agent asked again
	// after, if any.
	LastRejection string `json:"last_rejection,omitempty"`
}

// GateRequestsOutput is sdd_gate_requests' output.
type GateRequestsOutput struct {
	Mode    string        `json:"mode" jsonschema:"enum=off,enum=on,enum=strict"`
	Pending []GateRequest `json:"pending"`
}

// GateRequests lists the moves that wait for a person, newest first.
func (e *Engine) GateRequests() (GateRequestsOutput, error) {
	out := GateRequestsOutput{Pending: []GateRequest{}}
	err := e.read(func(s *state, _ time.Time) error {
		out.Mode = s.gateMode()
		if s.Gates == nil {
			return nil
		}
		for _, r := range s.Gates.Requests {
			if r.State != gatePending {
				continue
			}
			gr := GateRequest{PhaseFrom: r.From, PhaseTo: r.To, RequestedBy: r.RequestedBy, RequestedAt: r.RequestedAt, Mode: r.Mode}
			if r.Decision == GateReject {
				gr.LastRejection = r.Reason
			}
			out.Pending = append(out.Pending, gr)
		}
		sort.Slice(out.Pending, func(i, j int) bool {
			if out.Pending[i].RequestedAt != out.Pending[j].RequestedAt {
				return out.Pending[i].RequestedAt > out.Pending[j].RequestedAt
			}
			return out.Pending[i].PhaseTo < out.Pending[j].PhaseTo
		})
		return nil
	})
	return out, err
}

// GateHistory returns the recorded decisions, newest first.
func (e *Engine) GateHistory() ([]GateDecision, error) {
	var out []GateDecision
	err := e.read(func(s *state, _ time.Time) error {
		if s.Gates != nil {
			for i := len(s.Gates.History) - 1; i >= 0; i-- {
				out = append(out, s.Gates.History[i])
			}
		}
		return nil
	})
	return out, err
}
