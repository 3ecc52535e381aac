package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func (c *Core) registerTaskTools() {
	sdk.AddTool(c.p, sdk.Tool[tasks.CreateInput, tasks.CreateOutput]{
		Name:          "task_create",
		Title:         "Create task",
		Description:   "Creates a task in a registered project. New tasks start in backlog; returns the id (T-<n>) and the project's sequence number. Use parent_id for sub-tasks.",
		InputSchema:   taskCreateSchema,
		SuccessStatus: 201,
		Handler: func(ctx context.Context, in tasks.CreateInput) (tasks.CreateOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.CreateOutput{}, err
			}
			caller := sdk.CallerFrom(ctx).ID
			out, err := svc.Create(caller, in)
			if err == nil {
				c.rememberProject(caller, in.Project)
			}
			return out, err
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.UpdateInput, tasks.UpdateOutput]{
		Name:        "task_update",
		Title:       "Update task",
		Description: "Changes a task's status (along the transition table), progress, description, priority, assignee, labels or blocked_reason. Moving to blocked needs blocked_reason; setting the current status again changes nothing.",
		InputSchema: taskUpdateSchema,
		Handler: func(ctx context.Context, in tasks.UpdateInput) (tasks.UpdateOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.UpdateOutput{}, err
			}
			return svc.Update(sdk.CallerFrom(ctx).ID, in)
		},
	})
	sdk.AddTool(c.p, sdk.Tool[tasks.GetInput, tasks.Task]{
		Name:        "task_get",
		Title:       "Get task",
		Description: "Returns every field of a task; optionally its thought trail (record ids) and its dependents (sub-task ids).",
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
		Name:        "task_next_actions",
		Title:       "Next actions",
		Description: "Returns the project's tasks in todo, most important first (priority, then fewest unfinished sub-tasks, then oldest). Without project: CAIRN_PROJECT, else the project you used last. include_blocked adds the blocked tasks with their reasons.",
		InputSchema: taskNextSchema,
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(ctx context.Context, in tasks.NextInput) (tasks.NextOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.NextOutput{}, err
			}
			caller := sdk.CallerFrom(ctx).ID
			if in.Project == "" {
				c.mu.RLock()
				in.Project = c.active
				c.mu.RUnlock()
			}
			if in.Project == "" {
				in.Project = c.lastProject(caller)
			}
			if in.Project == "" {
				return tasks.NextOutput{}, errs.NotFoundf(errs.ProjectNotFound, "project",
					"no project given and no active project: pass project, set CAIRN_PROJECT, or create a task in a project first")
			}
			out, err := svc.NextActions(in)
			if err == nil {
				c.rememberProject(caller, in.Project)
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
