package sdd

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// workflowPrompt is one step of the spec-driven workflow offered as an MCP
// prompt: the phase goes in, the step's command file (workspace or bundled)
// comes out, headed by what to call.
type workflowPrompt struct {
	name, title, description string
	// command is the sdd command file the prompt renders.
	command string
	// lead says what to do first, given the phase.
	lead string
}

var workflowPrompts = []workflowPrompt{
	{name: "sdd-discuss-phase", title: "Discuss a phase", command: "discuss-phase",
		description: "Frame the discussion of a phase before planning it: questions to settle, decisions to lock, risks.",
		lead:        "Discuss phase %[1]s before it is planned: call sdd_discuss with phase %[1]q, settle the open questions with the user, and record each decision with thought_record."},
	{name: "sdd-plan-phase", title: "Plan a phase", command: "plan-phase",
		description: "Plan a phase with the spec-driven workflow: research, the plan file, and its check.",
		lead:        "Plan phase %[1]s: call sdd_plan with phase %[1]q (auto_spawn queues researcher, planner and plan checker), then validate the plan with sdd_validate."},
	{name: "sdd-execute-phase", title: "Execute a phase", command: "execute-phase",
		description: "Carry out a phase's plan task by task under leases, leaving tested, committed changes and a trail.",
		lead:        "Execute phase %[1]s: read .planning/PLAN-phase-%[1]s.md, then take each task under an sdd_lease, recording decisions with thought_record."},
	{name: "sdd-verify-phase", title: "Verify a phase", command: "verify-work",
		description: "Verify a phase's work against its plan's success criteria before calling it done.",
		lead:        "Verify phase %[1]s against the success criteria of .planning/PLAN-phase-%[1]s.md; report each criterion as met or not, with evidence."},
}

// phaseArgument is the argument every workflow prompt takes.
var phaseArgument = sdk.PromptArgument{Name: "phase", Description: "The phase (for example 2 or 2.1); completion offers the project's phases, the current one first.", Required: true}

func (s *Area) registerPrompts() {
	for _, w := range workflowPrompts {
		s.p.AddPrompt(sdk.Prompt{
			Name: w.name, Title: w.title, Description: w.description,
			Arguments: []sdk.PromptArgument{phaseArgument},
			Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
				return s.renderWorkflow(w, args["phase"])
			},
		})
	}
}

// renderWorkflow fills in a workflow prompt. The phase must be a name the
// workflow accepts (the plan file is named after it).
func (s *Area) renderWorkflow(w workflowPrompt, phase string) (sdk.PromptResult, error) {
	if err := engine.CheckPhase(phase); err != nil {
		return sdk.PromptResult{}, err
	}
	eng, err := s.engine()
	if err != nil {
		return sdk.PromptResult{}, err
	}
	rc, err := eng.ReadResource(ResourcePrefix + "commands/" + w.command)
	if err != nil {
		return sdk.PromptResult{}, errs.From(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, w.lead, phase)
	b.WriteString("\n\n")
	b.WriteString(rc.Content)
	return sdk.PromptResult{Description: w.description, Messages: []sdk.PromptMessage{{Role: "user", Text: b.String()}}}, nil
}

// registerCompletions completes the phase of the workflow prompts and the
// ids of the sdd:// templates (commands, agents, registered skills and
// spawn rules).
func (s *Area) registerCompletions() {
	s.p.CompleteWith(func(_ context.Context, req sdk.CompletionRequest) ([]string, bool, error) {
		eng, err := s.engine()
		if err != nil {
			return nil, true, err
		}
		switch {
		case req.Argument == "phase":
			phases, err := eng.PhaseNames()
			if err != nil {
				return nil, true, err
			}
			var out []string
			for _, p := range phases {
				if strings.HasPrefix(p, req.Value) {
					out = append(out, p)
				}
			}
			return out, true, nil
		case req.Argument == "id" && req.Ref.RefType == "resource" && strings.HasPrefix(req.Ref.Name, ResourcePrefix):
			family := strings.TrimSuffix(strings.TrimPrefix(req.Ref.Name, ResourcePrefix), "{id}")
			entries, err := eng.ListResources()
			if err != nil {
				return nil, true, err
			}
			var ids []string
			for _, e := range entries {
				if id, ok := strings.CutPrefix(e.URI, ResourcePrefix+family); ok {
					ids = append(ids, id)
				}
			}
			return sdk.MatchPrefix(ids, req.Value), true, nil
		}
		return nil, false, nil
	})
}
