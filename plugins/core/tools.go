package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func (c *Core) registerTaskTools() {
	sdk.AddTool(c.p, sdk.Tool[tasks.CreateInput, createdTask]{
		Name:               "task_create",
		Title:              "Create task",
		Description:        "Creates a task in a registered project (your session's project counts as registered). New tasks start in backlog; returns the id (T-<n>) and the project's sequence number. Use parent_id for sub-tasks and depends_on for tasks this one waits on.",
		InputSchema:        taskCreateSchema,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in tasks.CreateInput) (createdTask, error) {
			svc, err := c.svc()
			if err != nil {
				return createdTask{}, err
			}
			cl := call(ctx)
			out, err := svc.CreateFor(cl, in)
			if err == nil {
				c.rememberProject(cl.Actor, in.Project)
			}
			return createdTask(out), err
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.UpdateInput, tasks.UpdateOutput]{
		Name:               "task_update",
		Title:              "Update task",
		Description:        "Changes a task's status (along the transition table), progress, description, priority, assignee, labels, blocked_reason or depends_on. Moving to blocked needs blocked_reason; setting the current status again changes nothing. claim: true takes the task for you (in_progress, assigned to you) or fails with ERR_CONFLICT naming its holder; release: true gives your claim back (the task returns to todo).",
		InputSchema:        taskUpdateSchema,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in tasks.UpdateInput) (tasks.UpdateOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.UpdateOutput{}, err
			}
			return svc.UpdateFor(call(ctx), in)
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.GetInput, tasks.Task]{
		Name:        "task_get",
		Title:       "Get task",
		Description: "Returns every field of a task, its depends_on and its claim holder; optionally its thought trail (record ids) and its dependents (sub-task ids, plus depended_on_by: the tasks waiting on it).",
		InputSchema: taskGetSchema,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, in tasks.GetInput) (tasks.Task, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.Task{}, err
			}
			return svc.Get(in)
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.ListInput, tasks.ListOutput]{
		Name:        "task_list",
		Title:       "List tasks",
		Description: "Lists tasks with filters (project, status[], priority[], assignee, label, created_after/before, search), sorting (created, updated, priority, progress; asc or desc) and paging (limit ≤ 500, offset). total_count counts every match.",
		InputSchema: taskListSchema,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(ctx context.Context, in tasks.ListInput) (tasks.ListOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.ListOutput{}, err
			}
			out, err := svc.List(in)
			if err == nil && in.Project != nil {
				c.rememberProject(sdk.CallerFrom(ctx).ID, *in.Project)
			}
			return out, err
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.NextInput, tasks.NextOutput]{
		Name:               "task_next_actions",
		Title:              "Next actions",
		Description:        "Returns the project's tasks in todo whose dependencies are all done or cancelled, most important first (priority, then fewest unfinished sub-tasks, then oldest). Without project: your session's project, else the project you used last. claim: true takes the first one for you atomically (in_progress, assigned to you) — use it to pick work when other agents share the project. include_blocked adds the blocked tasks with their reasons and the todo tasks still waiting on dependencies.",
		InputSchema:        taskNextSchema,
		ReadOnly:           true,
		Idempotent:         true,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in tasks.NextInput) (tasks.NextOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.NextOutput{}, err
			}
			cl := call(ctx)
			if in.Claim != nil && *in.Claim && !sdk.CallerFrom(ctx).HasScope("write") {
				return tasks.NextOutput{}, errs.New(403, errs.Forbidden, "claim: true changes the task and needs the write scope; call without claim to only read the list").
					With("field", "claim").With("required", "write")
			}
			if in.Project == "" {
				in.Project = cl.Project
			}
			if in.Project == "" {
				c.mu.RLock()
				in.Project = c.active
				c.mu.RUnlock()
			}
			if in.Project == "" {
				in.Project = c.lastProject(cl.Actor)
			}
			if in.Project == "" {
				return tasks.NextOutput{}, errs.NotFoundf(errs.ProjectNotFound, "project",
					"no project given and no active project: pass project, set CAIRN_PROJECT, or create a task in a project first")
			}
			out, err := svc.NextActionsFor(cl, in)
			if err == nil {
				c.rememberProject(cl.Actor, in.Project)
			}
			return out, err
		},
	})
}

// SkillListInput is skill_list's input.
type SkillListInput struct {
	Search     string `json:"search,omitempty"`
	Capability string `json:"capability,omitempty"`
}

// SkillListOutput is skill_list's output.
type SkillListOutput struct {
	Skills     []skills.Skill `json:"skills"`
	TotalCount int            `json:"total_count"`
}

func (c *Core) registerSkillTools() {
	sdk.AddTool(c.p, sdk.Tool[SkillListInput, SkillListOutput]{
		Name:        "skill_list",
		Title:       "List skills",
		Description: "Lists the skills in .agents/skills (directories named cairn-*), read live from disk: name, version, description, capabilities and path. Filter by a search substring or one capability.",
		InputSchema: skillListSchema,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(_ context.Context, in SkillListInput) (SkillListOutput, error) {
			c.mu.RLock()
			reg := c.skills
			c.mu.RUnlock()
			if reg == nil {
				return SkillListOutput{}, errs.New(503, errs.Unavailable, "the skill registry is not open")
			}
			list, err := reg.List(in.Search, in.Capability)
			if err != nil {
				return SkillListOutput{}, err
			}
			if list == nil {
				list = []skills.Skill{}
			}
			return SkillListOutput{Skills: list, TotalCount: len(list)}, nil
		},
	})
}
