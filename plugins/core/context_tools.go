package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/resume"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// taskContextArgs is task_context's input (docs/decisions.md D39).
type taskContextArgs struct {
	MaxBytes *int `json:"max_bytes,omitempty" jsonschema:"minimum=1024,maximum=65536,default=4000"`
}

// ResumePrompt is the prompt that offers task_context's brief.
const ResumePrompt = "resume"

// registerContextTool serves task_context and follows the sdd area's
// leases on the bus (docs/decisions.md D39).
func (c *Area) registerContextTool() {
	c.p.OnEvent(leases.EventIssued, c.onLeaseEvent)
	c.p.OnEvent(leases.EventReturned, c.onLeaseEvent)
	sdk.AddTool(c.p, sdk.Tool[taskContextArgs, resume.Brief]{
		Name:        "task_context",
		Title:       "Resume",
		Description: "Call first after a restart: your tasks, decisions, leases, next actions.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(ctx context.Context, in taskContextArgs) (resume.Brief, error) {
			cl := call(ctx)
			return c.brief(cl.Actor, c.resolveProject("", cl.Project, cl.Actor), in.MaxBytes)
		},
	})
}

// resolveProject picks the project for next actions as task_next_actions
// does (D7, D24): the argument, the session's, CAIRN_PROJECT, the
// caller's last; it may stay empty.
func (c *Area) resolveProject(arg, session, actor string) string {
	if arg != "" {
		return arg
	}
	if session != "" {
		return session
	}
	c.mu.RLock()
	active := c.active
	c.mu.RUnlock()
	if active != "" {
		return active
	}
	return c.lastProject(actor)
}

func (c *Area) brief(agent, project string, maxBytes *int) (resume.Brief, error) {
	c.mu.RLock()
	st := c.store
	c.mu.RUnlock()
	if st == nil {
		return resume.Brief{}, errs.New(503, errs.Unavailable, "the core store is not open")
	}
	return resume.Build(resume.Sources{Store: st}, resume.Input{Agent: agent, Project: project, MaxBytes: maxBytes})
}

// onLeaseEvent mirrors an sdd lease in the core store (package leases).
func (c *Area) onLeaseEvent(_ context.Context, ev sdk.Event) error {
	c.mu.RLock()
	st := c.store
	c.mu.RUnlock()
	if st == nil {
		return errs.New(503, errs.Unavailable, "the core store is not open")
	}
	return leases.Apply(st, ev.Type, ev.Data, time.Now())
}

// resumePrompt offers the brief as a prompt. A prompt request carries no
// caller, so the agent is an argument; without one the prompt tells the
// agent to call task_context, which knows its caller.
func (c *Area) resumePrompt() sdk.Prompt {
	return sdk.Prompt{
		Name: ResumePrompt, Title: "Resume after a restart",
		Description: "An agent's tasks, last decisions, blockers, leases and next actions (task_context's brief).",
		Arguments: []sdk.PromptArgument{
			{Name: "agent", Description: "The agent id (CAIRN_AGENT_ID) whose work to resume."},
			{Name: "project", Description: "Project for next actions."},
			{Name: "max_bytes", Description: "Budget of the brief in bytes (1024-65536, default 4000)."},
		},
		Render: func(_ context.Context, args map[string]string) (sdk.PromptResult, error) {
			const lead = "You are resuming work after a restart or a compacted context."
			agent := strings.TrimSpace(args["agent"])
			if agent == "" {
				return sdk.PromptResult{Description: "Resume", Messages: []sdk.PromptMessage{{Role: "user",
					Text: lead + " Call the task_context tool first; then continue your claimed tasks from their last decisions, and read a cairn:// link only when you need what the brief left out."}}}, nil
			}
			var maxBytes *int
			if v := args["max_bytes"]; v != "" {
				n, err := strconv.Atoi(v)
				if err != nil {
					return sdk.PromptResult{}, errs.Invalidf("max_bytes", "type", "max_bytes must be a whole number of bytes")
				}
				maxBytes = &n
			}
			b, err := c.brief(agent, c.resolveProject(args["project"], "", agent), maxBytes)
			if err != nil {
				return sdk.PromptResult{}, err
			}
			raw, err := json.Marshal(b)
			if err != nil {
				return sdk.PromptResult{}, errs.Newf(500, errs.Internal, "brief: %v", err)
			}
			text := fmt.Sprintf("%s Here is %s's brief from cairn (task_context). Continue the claimed tasks from their last decisions; mind the lease expiries; read a cairn:// link in omitted.links only when you need it.\n\n%s", lead, agent, raw)
			return sdk.PromptResult{Description: "Resume " + agent, Messages: []sdk.PromptMessage{{Role: "user", Text: text}}}, nil
		},
	}
}
