package sdd

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
)

// TextOutput is the output of tools whose result is Markdown only
// (sdd_discuss): D3 wants structuredContent to be an object, so the text
// travels in one field.
type TextOutput struct {
	Text string `json:"text"`
}

// DashOutput is sdd_dash's output: Text for format text, Dashboard for
// format json.
type DashOutput struct {
	Format    string            `json:"format"`
	Text      string            `json:"text,omitempty"`
	Dashboard *engine.Dashboard `json:"dashboard,omitempty"`
}

// Tool names (PRODUCT.md D16: the sdd toolset). They live here only: the
// engine knows nothing of MCP.
const (
	ToolVitals   = "sdd_vitals"
	ToolPlan     = "sdd_plan"
	ToolDiscuss  = "sdd_discuss"
	ToolState    = "sdd_state"
	ToolValidate = "sdd_validate"
	ToolLease    = "sdd_lease"
	ToolDash     = "sdd_dash"
	ToolEvolve   = "sdd_evolve"
	ToolAgent    = "sdd_agent"
	ToolSkill    = "sdd_skill"
)

// ToolNames lists the ten sdd_ tools in their declaration order.
var ToolNames = []string{
	ToolVitals, ToolPlan, ToolDiscuss, ToolState, ToolValidate,
	ToolLease, ToolDash, ToolEvolve, ToolAgent, ToolSkill,
}

// handler adapts an engine method to an SDK handler that first waits for
// the engine to exist.
func handler[In, Out any](s *SDD, f func(e *engine.Engine, in In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(_ context.Context, in In) (Out, error) {
		eng, err := s.engine()
		if err != nil {
			var zero Out
			return zero, err
		}
		return f(eng, in)
	}
}

// callHandler is handler for the writing tools: the engine also gets the
// tool's name and the call's idempotency key (sdk.IdempotencyOf), which
// it records with the write.
func callHandler[In, Out any](s *SDD, tool string, f func(e *engine.Engine, c engine.Call, in In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		eng, err := s.engine()
		if err != nil {
			var zero Out
			return zero, err
		}
		return f(eng, engine.Call{Key: sdk.IdempotencyOf(ctx).Key, Tool: tool}, in)
	}
}

func (s *SDD) registerTools() {
	sdk.AddTool(s.p, sdk.Tool[engine.VitalsInput, *engine.VitalsResult]{
		Name:  ToolVitals,
		Title: "SDD vitals",
		Description: "Start here: shows the spec-driven workflow's health, status, current phase and active lease count, and the sections " +
			"(objective, context, process, constraints, tasks, success checks) of a command file (.agents/commands/<command>.md or a bundled default). " +
			"Returns {text: Markdown, vitals: the parsed sections and state}.",
		InputSchema:  vitalsInputSchema,
		OutputSchema: vitalsOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		Handler:      handler(s, (*engine.Engine).VitalsTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.PlanInput, *engine.PlanToolResult]{
		Name:  ToolPlan,
		Title: "Plan a phase",
		Description: "Writes the plan of a phase to .planning/PLAN-phase-<phase>.md (replacing an existing one) with the sections objective, context, tasks, " +
			"verification and success_criteria, and makes it the current phase. With auto_spawn it also queues the plan_phase agent flow " +
			"(researcher, planner, plan checker; skip_research, has_research and skip_verify drop stages). Returns {text, phase, path, flow?}.",
		InputSchema:  planInputSchema,
		OutputSchema: planOutputSchema,
		Destructive:  true,
		// The answer is recorded with the call's last state write.
		HonoursIdempotency: true,
		Handler:            callHandler(s, ToolPlan, (*engine.Engine).PlanTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.DiscussInput, TextOutput]{
		Name:  ToolDiscuss,
		Title: "Discuss a phase",
		Description: "Frames the discussion of a phase before planning: where the project stands, questions to settle, decisions to lock, risks and the next step. " +
			"Writes nothing. Returns {text: Markdown}.",
		InputSchema:  discussInputSchema,
		OutputSchema: textOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		Handler: handler(s, func(e *engine.Engine, in engine.DiscussInput) (TextOutput, error) {
			text, err := e.DiscussTool(in)
			return TextOutput{Text: text}, err
		}),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.StateInput, *engine.StateResult]{
		Name:  ToolState,
		Title: "SDD key-value state",
		Description: "Reads and writes the workflow's key-value state by dot-separated keyPath (for example phases.2.decisions): get, set (any JSON value; " +
			"intermediate objects are created), delete, list (everything, or the subtree at keyPath). Returns {text, action, keyPath, found, value}.",
		InputSchema:  stateInputSchema,
		OutputSchema: stateOutputSchema,
		Destructive:  true,
		// set and delete record the idempotency key with their write.
		HonoursIdempotency: true,
		Handler:            callHandler(s, ToolState, (*engine.Engine).StateTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.ValidateInput, *engine.ValidateToolResult]{
		Name:  ToolValidate,
		Title: "Validate against the doctrine",
		Description: "Checks a document for the required sections of its type (plan: objective, context, tasks, verification, success_criteria; " +
			"project: What This Is, Core Value, Requirements; requirements: v1 Requirements, Out of Scope, Traceability), each as a <tag> block or a ## heading. " +
			"Returns {text: DOCTRINE VALIDATED or the violations, valid, missing, type}.",
		InputSchema:  validateInputSchema,
		OutputSchema: validateOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		Handler:      handler(s, (*engine.Engine).ValidateTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.LeaseInput, *engine.LeaseResult]{
		Name:  ToolLease,
		Title: "Execution leases",
		Description: "Timed execution leases on tasks, so agents do not work on the same thing: issue (taskId, optional scope; lasts one hour), " +
			"return (leaseId, optional result, default completed; an unknown, returned or expired lease is 404), list (active leases). " +
			"Returns {text: Markdown, action, lease?, leases?}.",
		InputSchema:        leaseInputSchema,
		OutputSchema:       leaseOutputSchema,
		HonoursIdempotency: true,
		Handler:            callHandler(s, ToolLease, (*engine.Engine).LeaseTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.DashInput, DashOutput]{
		Name:  ToolDash,
		Title: "SDD dashboard",
		Description: "Dashboard of the project (status, current phase, phases), leases and the spawn queue. " +
			"format text returns {format, text: Markdown}; format json returns {format, dashboard}.",
		InputSchema:  dashInputSchema,
		OutputSchema: dashOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		Handler: handler(s, func(e *engine.Engine, in engine.DashInput) (DashOutput, error) {
			r, err := e.DashTool(in)
			if err != nil {
				return DashOutput{}, err
			}
			switch v := r.(type) {
			case *engine.Dashboard:
				return DashOutput{Format: "json", Dashboard: v}, nil
			case string:
				return DashOutput{Format: "text", Text: v}, nil
			}
			return DashOutput{}, sdk.NewError(500, sdk.CodeInternal, "sdd_dash produced an unexpected result")
		}),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.EvolveInput, *engine.EvolveResult]{
		Name:  ToolEvolve,
		Title: "Evolve the workflow",
		Description: "Finds and fixes drift: detect (scope all, workflow or doctrine) lists candidates (phases without a plan file, expired leases never returned, " +
			"a project without a state write for 24 h); apply (candidateId, force for confidence below 0.7 or to overwrite a plan) fixes one and records how to undo it; " +
			"rollback (candidateId) undoes its latest applied action; report summarizes. Returns {text: Markdown, action, candidates?, apply?, rollback?}.",
		InputSchema:  evolveInputSchema,
		OutputSchema: evolveOutputSchema,
		Destructive:  true,
		Handler:      handler(s, (*engine.Engine).EvolveTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.AgentInput, any]{
		Name:  ToolAgent,
		Title: "Agent spawn rules and queue",
		Description: "Which helper agents to run, in what order: rules (all, or one intent), set_rule (intent, rule: agents per stage before, beforeParallel, main, after, afterParallel), " +
			"plan (intent, options: the resolved, flattened plan), enqueue (intent, options: queue the plan's steps as pending items), queue (optional status), " +
			"complete (spawnId, completionStatus completed/failed/skipped, note), history (limit, default 50, max 200). Returns a JSON object per action (see the output schema).",
		InputSchema:        agentInputSchema,
		OutputSchema:       agentOutputSchema,
		Destructive:        true,
		HonoursIdempotency: true,
		Handler:            callHandler(s, ToolAgent, (*engine.Engine).AgentTool),
	})
	sdk.AddTool(s.p, sdk.Tool[engine.SkillInput, any]{
		Name:  ToolSkill,
		Title: "SDD skill registry",
		Description: "Registry of skills and which agents have them: list (optional agentId), register (skillId, title, description, tags; creates or updates), " +
			"bind and unbind (agentId, skillId; bind needs a registered skill), recommend (intent, options: the skills of the intent's agents in plan order). " +
			"Returns a JSON object per action (see the output schema).",
		InputSchema:        skillInputSchema,
		OutputSchema:       skillOutputSchema,
		Destructive:        true,
		HonoursIdempotency: true,
		Handler:            callHandler(s, ToolSkill, (*engine.Engine).SkillTool),
	})
}
