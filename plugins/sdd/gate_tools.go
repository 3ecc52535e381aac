package sdd

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
)

// The phase gate tools (docs/decisions.md D45). All three are internal: a
// person sets the gate and decides, through the dashboard (CallInternal),
// the operator's CLI (`cairn sdd gates`, `cairn sdd approve`, `cairn sdd
// approvals`) or the host asking the person at the agent's client; no
// agent session lists or calls them, so no agent switches its own gate
// off or approves its own move.

type gatesArgs struct {
	Mode *string `json:"mode,omitempty" jsonschema:"enum=off,enum=on,enum=strict" description:"Absent: only read. on: a move of the current phase needs a person, who may be asked at the agent's client; strict: only the dashboard or the CLI approves."`
}

type gateApproveArgs struct {
	Phase        string  `json:"phase" jsonschema:"maxLength=64" description:"The phase the move goes to."`
	Decision     string  `json:"decision" jsonschema:"enum=approve,enum=reject"`
	Reason       *string `json:"reason,omitempty" jsonschema:"maxLength=2000" description:"Required to reject: what the agent must change."`
	Via          *string `json:"via,omitempty" jsonschema:"enum=dashboard,enum=cli,enum=elicitation,enum=input_request,default=cli" description:"Where the person decided."`
	CompleteMove *bool   `json:"complete_move,omitempty" jsonschema:"default=true" description:"Approved: make the phase current now."`
}

type gateRequestsArgs struct{}

// registerGateTools registers the phase gate tools.
func (s *Area) registerGateTools() {
	sdk.AddTools(s.p, s.sddGates(), s.sddGateApprove(), s.sddGateRequests())
}

// caller is the engine's view of the call in ctx, with who makes it.
func caller(ctx context.Context, tool string) engine.Call {
	return engine.Call{Idem: sdk.IdempotencyOf(ctx), Tool: tool, Actor: sdk.CallerFrom(ctx).ID}
}

// sddGates declares sdd_gates.
func (s *Area) sddGates() sdk.Tool[gatesArgs, engine.GatesOutput] {
	return sdk.Tool[gatesArgs, engine.GatesOutput]{
		Name:        "sdd_gates",
		Title:       "Phase gate mode",
		Description: "Reads or sets whether a move of the sdd phase needs a person's approval (off, on, strict). Called by `cairn sdd gates`.",
		Toolset:     sdk.InternalToolset,
		Idempotent:  true,
		Handler: func(ctx context.Context, in gatesArgs) (engine.GatesOutput, error) {
			e, err := s.engine()
			if err != nil {
				return engine.GatesOutput{}, err
			}
			return e.Gates(caller(ctx, "sdd_gates"), engine.GatesInput(in))
		},
	}
}

// sddGateApprove declares sdd_gate_approve.
func (s *Area) sddGateApprove() sdk.Tool[gateApproveArgs, engine.GateApproveOutput] {
	return sdk.Tool[gateApproveArgs, engine.GateApproveOutput]{
		Name:  engine.GateApproveTool,
		Title: "Approve or reject a phase move",
		Description: "A person's decision on a move of the sdd phase waiting for approval: approve (the phase becomes current) or reject with a reason. " +
			"The decision is kept in the phase gate history; the one who asked cannot approve. Called by `cairn sdd approve`, the dashboard and the host's question to the person at the client.",
		Toolset:            sdk.InternalToolset,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in gateApproveArgs) (engine.GateApproveOutput, error) {
			e, err := s.engine()
			if err != nil {
				return engine.GateApproveOutput{}, err
			}
			return e.DecideGate(caller(ctx, engine.GateApproveTool), engine.GateApproveInput(in))
		},
	}
}

// sddGateRequests declares sdd_gate_requests.
func (s *Area) sddGateRequests() sdk.Tool[gateRequestsArgs, engine.GateRequestsOutput] {
	return sdk.Tool[gateRequestsArgs, engine.GateRequestsOutput]{
		Name:        "sdd_gate_requests",
		Title:       "Pending phase moves",
		Description: "Moves of the sdd phase that wait for a person, newest request first. Called by `cairn sdd approvals` and the dashboard.",
		Toolset:     sdk.InternalToolset,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, _ gateRequestsArgs) (engine.GateRequestsOutput, error) {
			e, err := s.engine()
			if err != nil {
				return engine.GateRequestsOutput{}, err
			}
			return e.GateRequests()
		},
	}
}
