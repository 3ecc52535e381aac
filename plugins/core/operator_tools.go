package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
)

// Tools behind the operator's `cairn project …` (audit_export, behind
// `cairn audit export` and the dashboard's download, is with the audit tools):
// the CLI reaches the core store only through them, so the commands work
// while a daemon holds the store (docs/decisions.md D22).

// ProjectSlugInput names one project.
type ProjectSlugInput struct {
	Slug string `json:"slug" jsonschema:"minLength=1,maxLength=63,description=Project slug"`
}

// ProjectListOutput is project_list's output.
type ProjectListOutput struct {
	Projects []tasks.Project `json:"projects"`
	Count    int             `json:"count"`
}

func (c *Area) registerOperatorTools() {
	sdk.AddTool(c.p, sdk.Tool[struct{}, ProjectListOutput]{
		Name:        "project_list",
		Title:       "List projects",
		Description: "Lists the registered task projects (slug, registration time, and state when archived). Called by `cairn project list`.",
		// Internal: agents work in their session's project (D24) and
		// name others they are told of; the list is the operator's.
		Toolset:    sdk.InternalToolset,
		ReadOnly:   true,
		Idempotent: true,
		Handler: func(context.Context, struct{}) (ProjectListOutput, error) {
			svc, err := c.svc()
			if err != nil {
				return ProjectListOutput{}, err
			}
			ps, err := svc.ListProjects()
			if ps == nil {
				ps = []tasks.Project{}
			}
			return ProjectListOutput{Projects: ps, Count: len(ps)}, err
		},
	})
	// Registering a project is the operator's decision (D7): agents file
	// tasks under projects someone registered, so the tool is internal.
	sdk.AddTool(c.p, sdk.Tool[ProjectSlugInput, tasks.Project]{
		Name:        "project_register",
		Title:       "Register project",
		Description: "Registers a task project slug (registering an existing one returns it). Called by `cairn project add`.",
		Toolset:     sdk.InternalToolset,
		Idempotent:  true,
		Handler: func(_ context.Context, in ProjectSlugInput) (tasks.Project, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.Project{}, err
			}
			return svc.AddProject(in.Slug)
		},
	})
}
