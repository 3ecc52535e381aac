package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
)

// The approval tools (docs/decisions.md D45). All three are internal: a
// person decides, through the dashboard (CallInternal), the operator's CLI
// (`cairn project approval`, `cairn task approve`, `cairn task approvals`)
// or the host asking the person at the agent's client; no agent session
// lists or calls them, so no agent credential approves its own move.

type projectApprovalArgs struct {
	Project string  `json:"project" pattern:"^[a-z0-9][a-z0-9-]{0,62}$"`
	Mode    *string `json:"mode,omitempty" jsonschema:"enum=off,enum=on,enum=strict" description:"Absent: only read. on: a move to done needs a person, who may be asked at the agent's client; strict: only the dashboard or the CLI approves."`
}

type taskApproveArgs struct {
	TaskID       string  `json:"task_id" pattern:"^T-[1-9][0-9]*$"`
	Decision     string  `json:"decision" jsonschema:"enum=approve,enum=reject"`
	Reason       *string `json:"reason,omitempty" jsonschema:"maxLength=2000" description:"Required to reject: what the agent must change."`
	Via          *string `json:"via,omitempty" jsonschema:"enum=dashboard,enum=cli,enum=elicitation,enum=input_request,default=cli" description:"Where the person decided."`
	CompleteMove *bool   `json:"complete_move,omitempty" jsonschema:"default=true" description:"Approved in review: move to done now."`
}

type taskApprovalsArgs struct {
	Project *string `json:"project,omitempty" pattern:"^[a-z0-9][a-z0-9-]{0,62}$"`
}

// registerApprovalTools registers the approval tools.
func (c *Area) registerApprovalTools() {
	sdk.AddTools(c.p, c.projectApproval(), c.taskApprove(), c.taskApprovals())
}

// projectApproval declares project_approval.
func (c *Area) projectApproval() sdk.Tool[projectApprovalArgs, tasks.ProjectApprovalOutput] {
	return sdk.Tool[projectApprovalArgs, tasks.ProjectApprovalOutput]{
		Name:        "project_approval",
		Title:       "Project approval mode",
		Description: "Reads or sets whether a project's moves to done need a person's approval (off, on, strict). Called by `cairn project approval`.",
		Toolset:     sdk.InternalToolset,
		Idempotent:  true,
		Handler: func(ctx context.Context, in projectApprovalArgs) (tasks.ProjectApprovalOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.ProjectApprovalOutput{}, err
			}
			return svc.ProjectApproval(sdk.CallerFrom(ctx).ID, tasks.ProjectApprovalInput(in))
		},
	}
}

// taskApprove declares task_approve.
func (c *Area) taskApprove() sdk.Tool[taskApproveArgs, tasks.ApproveOutput] {
	return sdk.Tool[taskApproveArgs, tasks.ApproveOutput]{
		Name:  "task_approve",
		Title: "Approve or reject a move to done",
		Description: "A person's decision on a task waiting for approval: approve (in review it moves to done) or reject with a reason (in review it goes back to in_progress). " +
			"The decision is a record on the task's trail; the one who asked cannot approve. Called by `cairn task approve`, the dashboard and the host's question to the person at the client.",
		Toolset:            sdk.InternalToolset,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in taskApproveArgs) (tasks.ApproveOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.ApproveOutput{}, err
			}
			return svc.Decide(call(ctx), tasks.ApproveInput(in))
		},
	}
}

// taskApprovals declares task_approvals.
func (c *Area) taskApprovals() sdk.Tool[taskApprovalsArgs, tasks.ApprovalsOutput] {
	return sdk.Tool[taskApprovalsArgs, tasks.ApprovalsOutput]{
		Name:        "task_approvals",
		Title:       "Pending approvals",
		Description: "Tasks whose move to done waits for a person, newest request first. Called by `cairn task approvals` and the dashboard.",
		Toolset:     sdk.InternalToolset,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, in taskApprovalsArgs) (tasks.ApprovalsOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.ApprovalsOutput{}, err
			}
			return svc.Approvals(tasks.ApprovalsInput(in))
		},
	}
}
