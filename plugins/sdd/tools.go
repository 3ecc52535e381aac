package sdd

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// TextOutput is the output of tools whose result is Markdown only
// (sdd_discuss): D3 wants structuredContent to be an object, so the text
// travels in one field.
type TextOutput struct {
	Text string `json:"text" description:"Markdown."`
}

// DashOutput is sdd_dash's output: Text for format text, Dashboard for
// format json.
type DashOutput struct {
	Format    string            `json:"format" jsonschema:"enum=text,enum=json"`
	Text      string            `json:"text,omitempty" description:"format text: the Markdown dashboard."`
	Dashboard *engine.Dashboard `json:"dashboard,omitempty" description:"format json: stats, phases, active leases, pending spawns, spawn counts, bindings, evolution counts."`
}

// Tool names (docs/decisions.md D16: the sdd toolset). They live here only: the
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
func handler[In, Out any](s *Area, f func(e *engine.Engine, in In) (Out, error)) func(context.Context, In) (Out, error) {
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
func callHandler[In, Out any](s *Area, tool string, f func(e *engine.Engine, c engine.Call, in In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		eng, err := s.engine()
		if err != nil {
			var zero Out
			return zero, err
		}
		c := caller(ctx, tool)
		c.Tasks = coreBoard{ctx}
		return f(eng, c, in)
	}
}

// registerTools registers the sdd_ tools in ToolNames order.
func (s *Area) registerTools() {
	sdk.AddTools(s.p,
		s.sddVitals(),
		s.sddPlan(),
		s.sddDiscuss(),
		s.sddState(),
		s.sddValidate(),
		s.sddLease(),
		s.sddDash(),
		s.sddEvolve(),
		s.sddAgent(),
		s.sddSkill(),
	)
}

// sddVitals declares sdd_vitals.
func (s *Area) sddVitals() sdk.Tool[vitalsArgs, *engine.VitalsResult] {
	return sdk.Tool[vitalsArgs, *engine.VitalsResult]{
		Name:        ToolVitals,
		Title:       "Vitals",
		Description: "Start here: health, current phase, a command's sections.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: handler(s, func(e *engine.Engine, in vitalsArgs) (*engine.VitalsResult, error) {
			return e.VitalsTool(engine.VitalsInput(in))
		}),
	}
}

// sddPlan declares sdd_plan.
func (s *Area) sddPlan() sdk.Tool[planArgs, *engine.PlanToolResult] {
	return sdk.Tool[planArgs, *engine.PlanToolResult]{
		Name:        ToolPlan,
		Title:       "Plan a phase",
		Description: "Write a phase's plan and make it current.",
		Destructive: true,
		// With tasks, its items become core's tasks (task_board.go).
		CallsTools: true,
		// The answer is recorded with the call's last state write.
		HonoursIdempotency: true,
		Handler: callHandler(s, ToolPlan, func(e *engine.Engine, c engine.Call, in planArgs) (*engine.PlanToolResult, error) {
			return e.PlanTool(c, engine.PlanInput(in))
		}),
	}
}

// sddDiscuss declares sdd_discuss.
func (s *Area) sddDiscuss() sdk.Tool[discussArgs, TextOutput] {
	return sdk.Tool[discussArgs, TextOutput]{
		Name:        ToolDiscuss,
		Title:       "Discuss a phase",
		Description: "Frame a phase: questions, decisions, risks.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: handler(s, func(e *engine.Engine, in discussArgs) (TextOutput, error) {
			text, err := e.DiscussTool(engine.DiscussInput(in))
			return TextOutput{Text: text}, err
		}),
	}
}

// sddState declares sdd_state.
func (s *Area) sddState() sdk.Tool[stateArgs, *engine.StateResult] {
	return sdk.Tool[stateArgs, *engine.StateResult]{
		Name:        ToolState,
		Title:       "Workflow state",
		Description: "Get, set, delete or list workflow state.",
		Destructive: true,
		// set and delete record the idempotency key with their write.
		HonoursIdempotency: true,
		Handler: callHandler(s, ToolState, func(e *engine.Engine, c engine.Call, in stateArgs) (*engine.StateResult, error) {
			return e.StateTool(c, engine.StateInput(in))
		}),
	}
}

// sddValidate declares sdd_validate.
func (s *Area) sddValidate() sdk.Tool[validateArgs, *engine.ValidateToolResult] {
	return sdk.Tool[validateArgs, *engine.ValidateToolResult]{
		Name:        ToolValidate,
		Title:       "Validate a document",
		Description: "Check a document's required sections.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: handler(s, func(e *engine.Engine, in validateArgs) (*engine.ValidateToolResult, error) {
			return e.ValidateTool(engine.ValidateInput(in))
		}),
	}
}

// sddLease declares sdd_lease.
func (s *Area) sddLease() sdk.Tool[leaseArgs, *engine.LeaseResult] {
	return sdk.Tool[leaseArgs, *engine.LeaseResult]{
		Name:               ToolLease,
		Title:              "Execution leases",
		Description:        "Issue, return or list timed task leases.",
		HonoursIdempotency: true,
		// A task id is checked with core's task_get (task_board.go).
		CallsTools: true,
		Handler: callHandler(s, ToolLease, func(e *engine.Engine, c engine.Call, in leaseArgs) (*engine.LeaseResult, error) {
			return e.LeaseTool(c, engine.LeaseInput(in))
		}),
	}
}

// sddDash declares sdd_dash.
func (s *Area) sddDash() sdk.Tool[dashArgs, DashOutput] {
	return sdk.Tool[dashArgs, DashOutput]{
		Name:        ToolDash,
		Title:       "Dashboard",
		Description: "Status, phases, leases, spawn queue.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: handler(s, func(e *engine.Engine, in dashArgs) (DashOutput, error) {
			r, err := e.DashTool(engine.DashInput(in))
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
	}
}

// sddEvolve declares sdd_evolve.
func (s *Area) sddEvolve() sdk.Tool[evolveArgs, *engine.EvolveResult] {
	return sdk.Tool[evolveArgs, *engine.EvolveResult]{
		Name:        ToolEvolve,
		Title:       "Evolve the workflow",
		Description: "Detect drift; apply, roll back or report a fix.",
		Destructive: true,
		Handler: handler(s, func(e *engine.Engine, in evolveArgs) (*engine.EvolveResult, error) {
			return e.EvolveTool(engine.EvolveInput(in))
		}),
	}
}

// sddAgent declares sdd_agent.
func (s *Area) sddAgent() sdk.Tool[agentArgs, any] {
	return sdk.Tool[agentArgs, any]{
		Name:               ToolAgent,
		Title:              "Agent flows",
		Description:        "Plan, queue, complete helper-agent flows per intent.",
		OutputFrom:         schema.For[agentOutput],
		Destructive:        true,
		HonoursIdempotency: true,
		Handler: callHandler(s, ToolAgent, func(e *engine.Engine, c engine.Call, in agentArgs) (any, error) {
			return e.AgentTool(c, engine.AgentInput(in))
		}),
	}
}

// sddSkill declares sdd_skill.
func (s *Area) sddSkill() sdk.Tool[skillArgs, any] {
	return sdk.Tool[skillArgs, any]{
		Name:               ToolSkill,
		Title:              "Agent skills",
		Description:        "List, register, bind or recommend agent skills.",
		OutputFrom:         schema.For[skillOutput],
		Destructive:        true,
		HonoursIdempotency: true,
		Handler: callHandler(s, ToolSkill, func(e *engine.Engine, c engine.Call, in skillArgs) (any, error) {
			return e.SkillTool(c, engine.SkillInput(in))
		}),
	}
}
