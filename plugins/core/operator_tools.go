package core

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/plugins/core/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk"
)

// Tools behind the operator's `cairn project …` and `cairn audit export`:
// the CLI reaches the core store only through them, so the commands work
// while a daemon holds the store (PRODUCT.md D22, issue 12).

// InternalToolset is the host's reserved toolset of tools no session lists
// or calls; the operator's commands call them.
const InternalToolset = "internal"

// ProjectSlugInput names one project.
type ProjectSlugInput struct {
	Slug string `json:"slug" jsonschema:"minLength=1,maxLength=63,description=Project slug"`
}

// ProjectListOutput is project_list's output.
type ProjectListOutput struct {
	Projects []tasks.Project `json:"projects"`
	Count    int             `json:"count"`
}

// ExportInput is audit_export's input.
type ExportInput struct {
	SessionID string `json:"session_id" jsonschema:"minLength=1,maxLength=64,description=A finalized audit session"`
}

// ExportOutput is audit_export's output: what a proof bundle is built from.
type ExportOutput struct {
	Session bundle.Session  `json:"session"`
	Records []bundle.Record `json:"records"`
	Root    string          `json:"root"`
}

func (c *Core) registerOperatorTools() {
	sdk.AddTool(c.p, sdk.Tool[struct{}, ProjectListOutput]{
		Name:        "project_list",
		Title:       "List projects",
		Description: "Lists the registered task projects (slug, registration time, and state when archived).",
		ReadOnly:    true,
		Idempotent:  true,
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
		Toolset:     InternalToolset,
		Idempotent:  true,
		Handler: func(_ context.Context, in ProjectSlugInput) (tasks.Project, error) {
			svc, err := c.svc()
			if err != nil {
				return tasks.Project{}, err
			}
			return svc.AddProject(in.Slug)
		},
	})
	auditTool(c, sdk.Tool[ExportInput, ExportOutput]{
		Name:        "audit_export",
		Title:       "Export audit session",
		Description: "Returns a finalized audit session's metadata, its frozen records in leaf order with their hash inputs, and the frozen Merkle root: what `cairn audit export` signs into a proof bundle. The stored trail is verified first; an open session must be finalized (merkle_finalize) before it can be exported.",
		ReadOnly:    true,
		Idempotent:  true,
	}, func(svc *audit.Service, _ string, in ExportInput) (ExportOutput, error) {
		meta, records, root, err := svc.Export(in.SessionID)
		if records == nil {
			records = []bundle.Record{}
		}
		return ExportOutput{Session: meta, Records: records, Root: root}, err
	})
}
