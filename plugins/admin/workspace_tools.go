package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// WorkspaceIDInput names one workspace.
type WorkspaceIDInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64,description=Workspace id (ws_…)"`
}

// WorkspaceCreateInput is admin_workspace_create's input.
type WorkspaceCreateInput struct {
	Name           string                   `json:"name" jsonschema:"minLength=1,maxLength=255"`
	Description    string                   `json:"description,omitempty" jsonschema:"maxLength=4000"`
	OwnerID        string                   `json:"owner_id,omitempty" jsonschema:"maxLength=255,description=First owner (default: you)"`
	OrgID          string                   `json:"org_id,omitempty" jsonschema:"maxLength=255"`
	Settings       map[string]any           `json:"settings,omitempty"`
	ResourceLimits *accounts.LimitOverrides `json:"resource_limits,omitempty" jsonschema:"description=Overrides of max_projects 100 / max_members 50 / storage_gb 100 / api_calls_per_day 10000 / max_conversations 1000"`
	Metadata       map[string]any           `json:"metadata,omitempty"`
}

// WorkspaceListInput is admin_workspace_list's input.
type WorkspaceListInput struct {
	OrgID   string `json:"org_id,omitempty"`
	OwnerID string `json:"owner_id,omitempty"`
	Status  string `json:"status,omitempty" jsonschema:"enum=active,enum=suspended,enum=archived"`
	Limit   int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset  int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// WorkspaceList is admin_workspace_list's output.
type WorkspaceList struct {
	Workspaces []*accounts.Workspace `json:"workspaces"`
	Count      int                   `json:"count"`
}

// WorkspaceUpdateInput is admin_workspace_update's input.
type WorkspaceUpdateInput struct {
	WorkspaceID    string                   `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Name           *string                  `json:"name,omitempty" jsonschema:"minLength=1,maxLength=255"`
	Description    *string                  `json:"description,omitempty" jsonschema:"maxLength=4000"`
	Settings       map[string]any           `json:"settings,omitempty"`
	Metadata       map[string]any           `json:"metadata,omitempty"`
	Status         *string                  `json:"status,omitempty" jsonschema:"enum=active,enum=suspended,enum=archived"`
	ResourceLimits *accounts.LimitOverrides `json:"resource_limits,omitempty"`
}

// workspaceTools registers the tools of workspaces and what they hold:
// members, invitations and projects.
func (a *Area) workspaceTools() {
	sdk.AddTools(a.p,
		a.workspaceCreate(),
		a.workspaceGet(),
		a.workspaceList(),
		a.workspaceUpdate(),
		a.workspaceDelete(),
		a.workspaceStats(),
		a.memberAdd(),
		a.memberGet(),
		a.memberList(),
		a.memberUpdateRole(),
		a.memberRemove(),
		a.invitationCreate(),
		a.invitationAccept(),
		a.invitationRevoke(),
		a.invitationList(),
		a.projectCreate(),
		a.projectGet(),
		a.projectList(),
		a.projectUpdate(),
		a.projectArchive(),
		a.projectUnarchive(),
		a.projectDelete(),
	)
}

// workspaceCreate declares admin_workspace_create.
func (a *Area) workspaceCreate() sdk.Tool[WorkspaceCreateInput, *accounts.Workspace] {
	return sdk.Tool[WorkspaceCreateInput, *accounts.Workspace]{
		Name: "admin_workspace_create", Title: "Create workspace", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Create a workspace; you become its first owner.",
		Handler: keyed(a, "admin_workspace_create", nil, func(ctx context.Context, in WorkspaceCreateInput, c *store.Call) (*accounts.Workspace, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			owner := in.OwnerID
			if owner == "" {
				owner = by.ID
			}
			if owner != by.ID && !by.Operator {
				// Nobody is made an owner without their consent (docs/decisions.md D35).
				return nil, accounts.Forbidden("self", "a key creates workspaces owned by its own user (%s), not by %s; %s creates their own, or the local operator creates it for them", by.ID, owner, owner).With("field", "owner_id")
			}
			o := accounts.CreateWorkspaceOptions{Name: in.Name, Description: in.Description, OwnerID: owner, Settings: in.Settings, ResourceLimits: in.ResourceLimits, Metadata: in.Metadata, CreatedBy: by.ID}
			if in.OrgID != "" {
				o.OrgID = &in.OrgID
			}
			ws, err := l.Keyed(c).CreateWorkspace(o)
			a.published()
			return ws, err
		}),
	}
}

// workspaceGet declares admin_workspace_get.
func (a *Area) workspaceGet() sdk.Tool[WorkspaceIDInput, *accounts.Workspace] {
	return sdk.Tool[WorkspaceIDInput, *accounts.Workspace]{
		Name: "admin_workspace_get", Title: "Get workspace", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace with its status and resource limits.",
		Handler: func(ctx context.Context, in WorkspaceIDInput) (*accounts.Workspace, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleViewer); err != nil {
				return nil, err
			}
			ws, err := l.GetWorkspace(in.WorkspaceID)
			if err == nil && ws == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return ws, err
		},
	}
}

// workspaceList declares admin_workspace_list.
func (a *Area) workspaceList() sdk.Tool[WorkspaceListInput, WorkspaceList] {
	return sdk.Tool[WorkspaceListInput, WorkspaceList]{
		Name: "admin_workspace_list", Title: "List workspaces", ReadOnly: true, Idempotent: true,
		Description: "List the workspaces you belong to, oldest first.",
		Handler: func(ctx context.Context, in WorkspaceListInput) (WorkspaceList, error) {
			l, err := a.library()
			if err != nil {
				return WorkspaceList{}, err
			}
			o := accounts.ListWorkspacesOptions{OrgID: in.OrgID, OwnerID: in.OwnerID, Status: in.Status, Page: accounts.Page{Limit: in.Limit, Offset: in.Offset}}
			seen, err := visibleWorkspaces(l, actor(ctx), accounts.RoleViewer)
			if err != nil {
				return WorkspaceList{}, err
			}
			if seen != nil {
				o.Visible = func(ws *accounts.Workspace) bool { return seen[ws.ID] }
			}
			ws, err := l.ListWorkspaces(o)
			if ws == nil {
				ws = []*accounts.Workspace{}
			}
			return WorkspaceList{Workspaces: ws, Count: len(ws)}, err
		},
	}
}

// workspaceUpdate declares admin_workspace_update.
func (a *Area) workspaceUpdate() sdk.Tool[WorkspaceUpdateInput, *accounts.Workspace] {
	return sdk.Tool[WorkspaceUpdateInput, *accounts.Workspace]{
		Name: "admin_workspace_update", Title: "Update workspace", HonoursIdempotency: true,
		Description: "Change a workspace's name, description, settings, metadata, status or limits.",
		Handler: keyed(a, "admin_workspace_update", nil, func(ctx context.Context, in WorkspaceUpdateInput, c *store.Call) (*accounts.Workspace, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleAdmin); err != nil {
				return nil, err
			}
			ws, err := l.Keyed(c).UpdateWorkspace(in.WorkspaceID, accounts.WorkspaceUpdates{Name: in.Name, Description: in.Description, Settings: in.Settings, Metadata: in.Metadata, Status: in.Status, ResourceLimits: in.ResourceLimits})
			if err == nil && ws == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			a.published()
			return ws, err
		}),
	}
}

// workspaceDelete declares admin_workspace_delete.
func (a *Area) workspaceDelete() sdk.Tool[WorkspaceIDInput, accounts.DeleteResult] {
	return sdk.Tool[WorkspaceIDInput, accounts.DeleteResult]{
		Name: "admin_workspace_delete", Title: "Delete (archive) workspace", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Archive a workspace with its projects, invitations and keys (owner role).",
		Handler: keyed(a, "admin_workspace_delete", nil, func(ctx context.Context, in WorkspaceIDInput, c *store.Call) (accounts.DeleteResult, error) {
			l, err := a.library()
			if err != nil {
				return accounts.DeleteResult{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleOwner); err != nil {
				return accounts.DeleteResult{}, err
			}
			r, err := l.Keyed(c).DeleteWorkspace(in.WorkspaceID, caller(ctx))
			if err == nil && !r.Success {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			a.published()
			return r, err
		}),
	}
}

// workspaceStats declares admin_workspace_stats.
func (a *Area) workspaceStats() sdk.Tool[WorkspaceIDInput, *accounts.WorkspaceStats] {
	return sdk.Tool[WorkspaceIDInput, *accounts.WorkspaceStats]{
		Name: "admin_workspace_stats", Title: "Workspace statistics", ReadOnly: true, Idempotent: true,
		Description: "Count a workspace's projects, members, today's API calls and stored bytes.",
		Handler: func(ctx context.Context, in WorkspaceIDInput) (*accounts.WorkspaceStats, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleViewer); err != nil {
				return nil, err
			}
			s, err := l.GetWorkspaceStats(in.WorkspaceID)
			if err == nil && s == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return s, err
		},
	}
}

// library returns the open administration library, or a typed error before
// configuration.
func (a *Area) library() (*accounts.Admin, error) {
	l, _, err := a.parts()
	return l, err
}
