package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// ProjectCreateInput is admin_project_create's input.
type ProjectCreateInput struct {
	WorkspaceID string         `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Name        string         `json:"name" jsonschema:"minLength=1,maxLength=255"`
	Slug        string         `json:"slug,omitempty" jsonschema:"minLength=1,maxLength=63,description=Task project slug matching ^[a-z0-9][a-z0-9-]*$ (default: derived from name)"`
	Description string         `json:"description,omitempty" jsonschema:"maxLength=4000"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// ProjectIDInput names one project.
type ProjectIDInput struct {
	ProjectID string `json:"project_id" jsonschema:"minLength=1,maxLength=64,description=Project id (prj_…) or slug"`
}

// ProjectUpdateInput is admin_project_update's input.
type ProjectUpdateInput struct {
	ProjectID   string         `json:"project_id" jsonschema:"minLength=1,maxLength=64"`
	Name        *string        `json:"name,omitempty" jsonschema:"minLength=1,maxLength=255"`
	Description *string        `json:"description,omitempty" jsonschema:"maxLength=4000"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// ProjectListInput is admin_project_list's input.
type ProjectListInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Status      string `json:"status,omitempty" jsonschema:"enum=active,enum=archived"`
	Limit       int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset      int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// ProjectList is admin_project_list's output.
type ProjectList struct {
	Projects []*accounts.Project `json:"projects"`
	Count    int                 `json:"count"`
}

// projectCreate declares admin_project_create.
func (a *Area) projectCreate() sdk.Tool[ProjectCreateInput, *accounts.Project] {
	return sdk.Tool[ProjectCreateInput, *accounts.Project]{
		Name: "admin_project_create", Title: "Create workspace project", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Create a project in a workspace; task_create accepts its slug moments later.",
		Handler: keyed(a, "admin_project_create", nil, func(ctx context.Context, in ProjectCreateInput, c *store.Call) (*accounts.Project, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if err := l.RequireRole(in.WorkspaceID, by, accounts.RoleAdmin); err != nil {
				return nil, err
			}
			p, err := l.Keyed(c).CreateProject(in.WorkspaceID, accounts.CreateProjectOptions{Name: in.Name, Slug: in.Slug, Description: in.Description, Metadata: in.Metadata, CreatedBy: by.ID})
			a.published()
			return p, err
		}),
	}
}

// projectGet declares admin_project_get.
func (a *Area) projectGet() sdk.Tool[ProjectIDInput, *accounts.Project] {
	return sdk.Tool[ProjectIDInput, *accounts.Project]{
		Name: "admin_project_get", Title: "Get project", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace project by id or slug.",
		Handler: func(ctx context.Context, in ProjectIDInput) (*accounts.Project, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			return projectFor(ctx, l, in.ProjectID, accounts.RoleViewer)
		},
	}
}

// projectList declares admin_project_list.
func (a *Area) projectList() sdk.Tool[ProjectListInput, ProjectList] {
	return sdk.Tool[ProjectListInput, ProjectList]{
		Name: "admin_project_list", Title: "List projects", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's projects, oldest first.",
		Handler: func(ctx context.Context, in ProjectListInput) (ProjectList, error) {
			l, err := a.library()
			if err != nil {
				return ProjectList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleViewer); err != nil {
				return ProjectList{}, err
			}
			ps, err := l.ListProjects(in.WorkspaceID, accounts.ListProjectsOptions{Status: in.Status, Page: accounts.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && ps == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return ProjectList{Projects: ps, Count: len(ps)}, err
		},
	}
}

// projectUpdate declares admin_project_update.
func (a *Area) projectUpdate() sdk.Tool[ProjectUpdateInput, *accounts.Project] {
	return sdk.Tool[ProjectUpdateInput, *accounts.Project]{
		Name: "admin_project_update", Title: "Update project", HonoursIdempotency: true,
		Description: "Change a project's name, description or metadata.",
		Handler: keyed(a, "admin_project_update", nil, func(ctx context.Context, in ProjectUpdateInput, c *store.Call) (*accounts.Project, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			cur, err := projectFor(ctx, l, in.ProjectID, accounts.RoleAdmin)
			if err != nil {
				return nil, err
			}
			p, err := l.Keyed(c).UpdateProject(cur.ID, accounts.ProjectUpdates{Name: in.Name, Description: in.Description, Metadata: in.Metadata})
			if err == nil && p == nil {
				err = notFound("project_id", "project", in.ProjectID)
			}
			a.published()
			return p, err
		}),
	}
}

// projectArchive declares admin_project_archive.
func (a *Area) projectArchive() sdk.Tool[ProjectIDInput, *accounts.Project] {
	return a.projectStatusChange("admin_project_archive", "Archive project", "Archive a project: its tasks stay readable, new tasks under its slug are refused.", (*accounts.Admin).ArchiveProject)
}

// projectUnarchive declares admin_project_unarchive.
func (a *Area) projectUnarchive() sdk.Tool[ProjectIDInput, *accounts.Project] {
	return a.projectStatusChange("admin_project_unarchive", "Unarchive project", "Make an archived project active again.", (*accounts.Admin).UnarchiveProject)
}

// projectStatusChange declares a tool that applies f to one project the
// caller administers: archive and unarchive differ only in f.
func (a *Area) projectStatusChange(name, title, desc string, f func(l *accounts.Admin, id string) (*accounts.Project, error)) sdk.Tool[ProjectIDInput, *accounts.Project] {
	return sdk.Tool[ProjectIDInput, *accounts.Project]{
		Name: name, Title: title, Description: desc, Idempotent: true, HonoursIdempotency: true,
		Handler: keyed(a, name, nil, func(ctx context.Context, in ProjectIDInput, c *store.Call) (*accounts.Project, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			cur, err := projectFor(ctx, l, in.ProjectID, accounts.RoleAdmin)
			if err != nil {
				return nil, err
			}
			p, err := f(l.Keyed(c), cur.ID)
			if err == nil && p == nil {
				err = notFound("project_id", "project", in.ProjectID)
			}
			a.published()
			return p, err
		}),
	}
}

// projectDelete declares admin_project_delete.
func (a *Area) projectDelete() sdk.Tool[ProjectIDInput, accounts.DeleteResult] {
	return sdk.Tool[ProjectIDInput, accounts.DeleteResult]{
		Name: "admin_project_delete", Title: "Delete project", Destructive: true, HonoursIdempotency: true,
		Description: "Delete a workspace project and free its slug.",
		Handler: keyed(a, "admin_project_delete", nil, func(ctx context.Context, in ProjectIDInput, c *store.Call) (accounts.DeleteResult, error) {
			l, err := a.library()
			if err != nil {
				return accounts.DeleteResult{}, err
			}
			cur, err := projectFor(ctx, l, in.ProjectID, accounts.RoleAdmin)
			if err != nil {
				return accounts.DeleteResult{}, err
			}
			r, err := l.Keyed(c).DeleteProject(cur.ID)
			if err == nil && !r.Success {
				err = notFound("project_id", "project", in.ProjectID)
			}
			a.published()
			return r, err
		}),
	}
}

// projectFor resolves a project id or slug (404 when unknown) and checks
// the caller's role in its workspace.
func projectFor(ctx context.Context, l *accounts.Admin, idOrSlug, role string) (*accounts.Project, error) {
	p, err := l.GetProject(idOrSlug)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, notFound("project_id", "project", idOrSlug)
	}
	if err := l.RequireRole(p.WorkspaceID, actor(ctx), role); err != nil {
		return nil, err
	}
	return p, nil
}
