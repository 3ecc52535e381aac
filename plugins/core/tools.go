package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// registerTaskTools registers the task tools.
func (c *Area) registerTaskTools() {
	sdk.AddTools(c.p,
		c.taskCreate(),
		c.taskUpdate(),
		c.taskGet(),
		c.taskList(),
		c.taskNextActions(),
	)
}

// taskCreate declares task_create.
func (c *Area) taskCreate() sdk.Tool[taskCreateArgs, createdTask] {
	return sdk.Tool[taskCreateArgs, createdTask]{
		Name:               "task_create",
		Title:              "Create task",
		Description:        "Create a task; it starts in backlog.",
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, args taskCreateArgs) (createdTask, error) {
			in := tasks.CreateInput(args)
			svc, err := c.svc()
			if err != nil {
				return createdTask{}, err
			}
			cl := call(ctx)
			if in.Project == "" {
				in.Project = cl.Project // D24: the session's project
			}
			out, err := svc.CreateFor(cl, in)
			if err == nil {
				c.rememberProject(cl.Actor, in.Project)
			}
			return createdTask(out), err
		},
	}
}

// taskUpdate declares task_update.
func (c *Area) taskUpdate() sdk.Tool[taskUpdateArgs, tasks.UpdateOutput] {
	return sdk.Tool[taskUpdateArgs, tasks.UpdateOutput]{
		Name:               "task_update",
		Title:              "Update task",
		Description:        "Change, claim or release a task.",
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, in taskUpdateArgs) (tasks.UpdateOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.UpdateOutput{}, err
			}
			return svc.UpdateFor(call(ctx), tasks.UpdateInput(in))
		},
	}
}

// taskGet declares task_get.
func (c *Area) taskGet() sdk.Tool[taskGetArgs, tasks.Task] {
	return sdk.Tool[taskGetArgs, tasks.Task]{
		Name:        "task_get",
		Title:       "Get task",
		Description: "Read one task.",
		ReadOnly:    true,
		Idempotent:  true,
		// A point read: quick on a bbolt file, a round trip on PostgreSQL.
		Quick: c.storeIsLocal,
		Handler: func(_ context.Context, in taskGetArgs) (tasks.Task, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.Task{}, err
			}
			return svc.Get(tasks.GetInput(in))
		},
	}
}

// taskList declares task_list.
func (c *Area) taskList() sdk.Tool[taskListArgs, tasks.ListOutput] {
	return sdk.Tool[taskListArgs, tasks.ListOutput]{
		Name:        "task_list",
		Title:       "List tasks",
		Description: "Find tasks by filters, sorted and paged.",
		ReadOnly:    true,
		Idempotent:  true,
		Handler: func(ctx context.Context, in taskListArgs) (tasks.ListOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.ListOutput{}, err
			}
			out, err := svc.List(tasks.ListInput(in))
			if err == nil && in.Project != nil {
				c.rememberProject(sdk.CallerFrom(ctx).ID, *in.Project)
			}
			return out, err
		},
	}
}

// taskNextActions declares task_next_actions.
func (c *Area) taskNextActions() sdk.Tool[taskNextArgs, tasks.NextOutput] {
	return sdk.Tool[taskNextArgs, tasks.NextOutput]{
		Name:               "task_next_actions",
		Title:              "Next actions",
		Description:        "Ready todo tasks, most important first.",
		ReadOnly:           true,
		Idempotent:         true,
		HonoursIdempotency: true,
		Handler: func(ctx context.Context, args taskNextArgs) (tasks.NextOutput, error) {
			in := tasks.NextInput(args)
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
	}
}

// SkillListInput is skill_list's input.
type SkillListInput struct {
	Search     string `json:"search,omitempty" jsonschema:"maxLength=200" description:"In name or description."`
	Capability string `json:"capability,omitempty" jsonschema:"maxLength=100" description:"Exact capability."`
}

// SkillListOutput is skill_list's output.
type SkillListOutput struct {
	Skills     []skills.Skill `json:"skills"`
	TotalCount int            `json:"total_count"`
}

// registerSkillTools registers the skill tools.
func (c *Area) registerSkillTools() {
	sdk.AddTools(c.p,
		c.skillList(),
	)
}

// skillList declares skill_list.
func (c *Area) skillList() sdk.Tool[SkillListInput, SkillListOutput] {
	return sdk.Tool[SkillListInput, SkillListOutput]{
		Name:        "skill_list",
		Title:       "List skills",
		Description: "List the skills in .agents/skills.",
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
	}
}
