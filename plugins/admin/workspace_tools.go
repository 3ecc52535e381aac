package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/admin"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

// WorkspaceIDInput names one workspace.
type WorkspaceIDInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64,description=Workspace id (ws_…)"`
}

// WorkspaceCreateInput is admin_workspace_create's input.
type WorkspaceCreateInput struct {
	Name           string                `json:"name" jsonschema:"minLength=1,maxLength=255"`
	Description    string                `json:"description,omitempty" jsonschema:"maxLength=4000"`
	OwnerID        string                `json:"owner_id,omitempty" jsonschema:"maxLength=255,description=First owner (default: you)"`
	OrgID          string                `json:"org_id,omitempty" jsonschema:"maxLength=255"`
	Settings       map[string]any        `json:"settings,omitempty"`
	ResourceLimits *admin.LimitOverrides `json:"resource_limits,omitempty" jsonschema:"description=Overrides of max_projects 100 / max_members 50 / storage_gb 100 / api_calls_per_day 10000 / max_conversations 1000"`
	Metadata       map[string]any        `json:"metadata,omitempty"`
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
	Workspaces []*admin.Workspace `json:"workspaces"`
	Count      int                `json:"count"`
}

// WorkspaceUpdateInput is admin_workspace_update's input.
type WorkspaceUpdateInput struct {
	WorkspaceID    string                `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Name           *string               `json:"name,omitempty" jsonschema:"minLength=1,maxLength=255"`
	Description    *string               `json:"description,omitempty" jsonschema:"maxLength=4000"`
	Settings       map[string]any        `json:"settings,omitempty"`
	Metadata       map[string]any        `json:"metadata,omitempty"`
	Status         *string               `json:"status,omitempty" jsonschema:"enum=active,enum=suspended,enum=archived"`
	ResourceLimits *admin.LimitOverrides `json:"resource_limits,omitempty"`
}

// MemberInput names one member.
type MemberInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	UserID      string `json:"user_id" jsonschema:"minLength=1,maxLength=255"`
}

// MemberAddInput is admin_member_add's input.
type MemberAddInput struct {
	WorkspaceID string         `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	UserID      string         `json:"user_id" jsonschema:"minLength=1,maxLength=255"`
	Role        string         `json:"role" jsonschema:"enum=owner,enum=admin,enum=member,enum=viewer"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// MemberRoleInput is admin_member_update_role's input.
type MemberRoleInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	UserID      string `json:"user_id" jsonschema:"minLength=1,maxLength=255"`
	Role        string `json:"role" jsonschema:"enum=owner,enum=admin,enum=member,enum=viewer"`
}

// MemberListInput is admin_member_list's input.
type MemberListInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Role        string `json:"role,omitempty" jsonschema:"enum=owner,enum=admin,enum=member,enum=viewer"`
	Limit       int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset      int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// MemberList is admin_member_list's output.
type MemberList struct {
	Members []admin.Member `json:"members"`
	Count   int            `json:"count"`
}

// Removed is the output of removals.
type Removed struct {
	Removed bool `json:"removed"`
}

// InviteInput is admin_invitation_create's input.
type InviteInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Email       string `json:"email" jsonschema:"minLength=3,maxLength=254"`
	Role        string `json:"role" jsonschema:"enum=owner,enum=admin,enum=member,enum=viewer"`
	Message     string `json:"message,omitempty" jsonschema:"maxLength=2000"`
}

// AcceptInput is admin_invitation_accept's input.
type AcceptInput struct {
	Token  string `json:"token" jsonschema:"minLength=1,maxLength=256"`
	UserID string `json:"user_id,omitempty" jsonschema:"maxLength=255,description=Member id to join as (default: the invitation's e-mail)"`
}

// InvitationIDInput names one invitation.
type InvitationIDInput struct {
	InvitationID string `json:"invitation_id" jsonschema:"minLength=1,maxLength=64"`
}

// Revoked is admin_invitation_revoke's output.
type Revoked struct {
	Revoked bool `json:"revoked"`
}

// InvitationListInput is admin_invitation_list's input.
type InvitationListInput struct {
	WorkspaceID string `json:"workspace_id" jsonschema:"minLength=1,maxLength=64"`
	Status      string `json:"status,omitempty" jsonschema:"enum=pending,enum=accepted,enum=revoked,enum=expired"`
	Limit       int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=500,default=50"`
	Offset      int    `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// InvitationList is admin_invitation_list's output.
type InvitationList struct {
	Invitations []admin.Invitation `json:"invitations"`
	Count       int                `json:"count"`
}

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
	Projects []*admin.Project `json:"projects"`
	Count    int              `json:"count"`
}

func (a *Area) workspaceTools() {
	lib := func() (*admin.Admin, error) {
		l, _, err := a.parts()
		return l, err
	}
	sdk.AddTool(a.p, sdk.Tool[WorkspaceCreateInput, *admin.Workspace]{
		Name: "admin_workspace_create", Title: "Create workspace", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Create a workspace; you become its first owner.",
		Handler: keyed(a, "admin_workspace_create", nil, func(ctx context.Context, in WorkspaceCreateInput, c *store.Call) (*admin.Workspace, error) {
			l, err := lib()
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
				return nil, admin.Forbidden("self", "a key creates workspaces owned by its own user (%s), not by %s; %s creates their own, or the local operator creates it for them", by.ID, owner, owner).With("field", "owner_id")
			}
			o := admin.CreateWorkspaceOptions{Name: in.Name, Description: in.Description, OwnerID: owner, Settings: in.Settings, ResourceLimits: in.ResourceLimits, Metadata: in.Metadata, CreatedBy: by.ID}
			if in.OrgID != "" {
				o.OrgID = &in.OrgID
			}
			ws, err := l.Keyed(c).CreateWorkspace(o)
			a.published()
			return ws, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[WorkspaceIDInput, *admin.Workspace]{
		Name: "admin_workspace_get", Title: "Get workspace", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace with its status and resource limits.",
		Handler: func(ctx context.Context, in WorkspaceIDInput) (*admin.Workspace, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleViewer); err != nil {
				return nil, err
			}
			ws, err := l.GetWorkspace(in.WorkspaceID)
			if err == nil && ws == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return ws, err
		},
	})
	sdk.AddTool(a.p, sdk.Tool[WorkspaceListInput, WorkspaceList]{
		Name: "admin_workspace_list", Title: "List workspaces", ReadOnly: true, Idempotent: true,
		Description: "List the workspaces you belong to, oldest first.",
		Handler: func(ctx context.Context, in WorkspaceListInput) (WorkspaceList, error) {
			l, err := lib()
			if err != nil {
				return WorkspaceList{}, err
			}
			o := admin.ListWorkspacesOptions{OrgID: in.OrgID, OwnerID: in.OwnerID, Status: in.Status, Page: admin.Page{Limit: in.Limit, Offset: in.Offset}}
			seen, err := visibleWorkspaces(l, actor(ctx), admin.RoleViewer)
			if err != nil {
				return WorkspaceList{}, err
			}
			if seen != nil {
				o.Visible = func(ws *admin.Workspace) bool { return seen[ws.ID] }
			}
			ws, err := l.ListWorkspaces(o)
			if ws == nil {
				ws = []*admin.Workspace{}
			}
			return WorkspaceList{Workspaces: ws, Count: len(ws)}, err
		},
	})
	sdk.AddTool(a.p, sdk.Tool[WorkspaceUpdateInput, *admin.Workspace]{
		Name: "admin_workspace_update", Title: "Update workspace", HonoursIdempotency: true,
		Description: "Change a workspace's name, description, settings, metadata, status or limits.",
		Handler: keyed(a, "admin_workspace_update", nil, func(ctx context.Context, in WorkspaceUpdateInput, c *store.Call) (*admin.Workspace, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleAdmin); err != nil {
				return nil, err
			}
			ws, err := l.Keyed(c).UpdateWorkspace(in.WorkspaceID, admin.WorkspaceUpdates{Name: in.Name, Description: in.Description, Settings: in.Settings, Metadata: in.Metadata, Status: in.Status, ResourceLimits: in.ResourceLimits})
			if err == nil && ws == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			a.published()
			return ws, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[WorkspaceIDInput, admin.DeleteResult]{
		Name: "admin_workspace_delete", Title: "Delete (archive) workspace", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Archive a workspace with its projects, invitations and keys (owner role).",
		Handler: keyed(a, "admin_workspace_delete", nil, func(ctx context.Context, in WorkspaceIDInput, c *store.Call) (admin.DeleteResult, error) {
			l, err := lib()
			if err != nil {
				return admin.DeleteResult{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleOwner); err != nil {
				return admin.DeleteResult{}, err
			}
			r, err := l.Keyed(c).DeleteWorkspace(in.WorkspaceID, caller(ctx))
			if err == nil && !r.Success {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			a.published()
			return r, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[WorkspaceIDInput, *admin.WorkspaceStats]{
		Name: "admin_workspace_stats", Title: "Workspace statistics", ReadOnly: true, Idempotent: true,
		Description: "Count a workspace's projects, members, today's API calls and stored bytes.",
		Handler: func(ctx context.Context, in WorkspaceIDInput) (*admin.WorkspaceStats, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleViewer); err != nil {
				return nil, err
			}
			s, err := l.GetWorkspaceStats(in.WorkspaceID)
			if err == nil && s == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return s, err
		},
	})

	sdk.AddTool(a.p, sdk.Tool[MemberAddInput, *admin.Member]{
		Name: "admin_member_add", Title: "Add member", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Add a user to a workspace with a role (the local operator only; others invite with admin_invitation_create).",
		Handler: keyed(a, "admin_member_add", nil, func(ctx context.Context, in MemberAddInput, c *store.Call) (*admin.Member, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if !by.Operator {
				// A user joins by accepting an invitation, or by the
				// operator adding them (docs/decisions.md D35).
				return nil, admin.Forbidden("operator", "a key cannot add a member: %s joins workspace %s by accepting an invitation (admin_invitation_create, then admin_invitation_accept with their own key), or the local operator adds them (`cairn admin members add`)", in.UserID, in.WorkspaceID).With("field", "user_id")
			}
			m, err := l.Keyed(c).AddMember(in.WorkspaceID, admin.AddMemberOptions{UserID: in.UserID, Role: in.Role, InvitedBy: by.ID, Metadata: in.Metadata, Operator: by.Operator})
			a.published()
			return m, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[MemberInput, *admin.Member]{
		Name: "admin_member_get", Title: "Get member", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace member's role, join time and inviter.",
		Handler: func(ctx context.Context, in MemberInput) (*admin.Member, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleViewer); err != nil {
				return nil, err
			}
			m, err := l.GetMember(in.WorkspaceID, in.UserID)
			if err == nil && m == nil {
				err = notFound("user_id", "member", in.UserID)
			}
			return m, err
		},
	})
	sdk.AddTool(a.p, sdk.Tool[MemberListInput, MemberList]{
		Name: "admin_member_list", Title: "List members", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's members, owners first.",
		Handler: func(ctx context.Context, in MemberListInput) (MemberList, error) {
			l, err := lib()
			if err != nil {
				return MemberList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleViewer); err != nil {
				return MemberList{}, err
			}
			ms, err := l.ListMembers(in.WorkspaceID, admin.ListMembersOptions{Role: in.Role, Page: admin.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && ms == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return MemberList{Members: ms, Count: len(ms)}, err
		},
	})
	sdk.AddTool(a.p, sdk.Tool[MemberRoleInput, *admin.Member]{
		Name: "admin_member_update_role", Title: "Change member role", HonoursIdempotency: true,
		Description: "Change a member's role; only an owner grants or changes the owner role.",
		Handler: keyed(a, "admin_member_update_role", nil, func(ctx context.Context, in MemberRoleInput, c *store.Call) (*admin.Member, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			need := grantRole(in.Role)
			if cur, err := l.GetMember(in.WorkspaceID, in.UserID); err == nil && cur != nil && cur.Role == admin.RoleOwner {
				need = admin.RoleOwner // changing an owner
			}
			if err := l.RequireRole(in.WorkspaceID, by, need); err != nil {
				return nil, err
			}
			m, err := l.Keyed(c).UpdateMemberRoleAs(in.WorkspaceID, in.UserID, in.Role, by)
			a.published()
			return m, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[MemberInput, Removed]{
		Name: "admin_member_remove", Title: "Remove member", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Remove a member from a workspace, or leave it yourself.",
		Handler: keyed(a, "admin_member_remove", func(c *store.Call, _ MemberInput) {
			store.Present(c, func(ok bool) Removed { return Removed{Removed: ok} })
		}, func(ctx context.Context, in MemberInput, c *store.Call) (Removed, error) {
			l, err := lib()
			if err != nil {
				return Removed{}, err
			}
			by := actor(ctx)
			need := admin.RoleAdmin
			if in.UserID == by.ID {
				need = admin.RoleViewer // leaving
			}
			if err := l.RequireRole(in.WorkspaceID, by, need); err != nil {
				return Removed{}, err
			}
			ok, err := l.Keyed(c).RemoveMemberAs(in.WorkspaceID, in.UserID, by)
			a.published()
			return Removed{Removed: ok}, err
		}),
	})

	sdk.AddTool(a.p, sdk.Tool[InviteInput, *admin.Invitation]{
		Name: "admin_invitation_create", Title: "Invite member", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Invite someone to a workspace; the one-time token (valid 7 days) is in this result only.",
		Handler: keyed(a, "admin_invitation_create", secrets[InviteInput](inviteNotice, "token"), func(ctx context.Context, in InviteInput, c *store.Call) (*admin.Invitation, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if err := l.RequireRole(in.WorkspaceID, by, grantRole(in.Role)); err != nil {
				return nil, err
			}
			return l.Keyed(c).InviteMember(in.WorkspaceID, admin.InviteMemberOptions{Email: in.Email, Role: in.Role, InvitedBy: by.ID, Message: in.Message, Operator: by.Operator})
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[AcceptInput, admin.AcceptResult]{
		Name: "admin_invitation_accept", Title: "Accept invitation", HonoursIdempotency: true,
		Description: "Redeem an invitation token to join its workspace with the invited role.",
		Handler: keyed(a, "admin_invitation_accept", nil, func(ctx context.Context, in AcceptInput, c *store.Call) (admin.AcceptResult, error) {
			l, err := lib()
			if err != nil {
				return admin.AcceptResult{}, err
			}
			by := actor(ctx)
			user := in.UserID
			if !by.Operator {
				if user != "" && user != by.ID {
					return admin.AcceptResult{}, admin.Forbidden("self", "you can accept an invitation only as yourself (%s), not as %s: joining is %s's own consent", by.ID, user, user).With("field", "user_id")
				}
				user = by.ID
			}
			r, err := l.Keyed(c).AcceptInvitation(in.Token, user)
			a.published()
			return r, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[InvitationIDInput, Revoked]{
		Name: "admin_invitation_revoke", Title: "Revoke invitation", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Revoke a pending invitation so its token no longer works.",
		Handler: keyed(a, "admin_invitation_revoke", func(c *store.Call, _ InvitationIDInput) {
			store.Present(c, func(ok bool) Revoked { return Revoked{Revoked: ok} })
		}, func(ctx context.Context, in InvitationIDInput, c *store.Call) (Revoked, error) {
			l, err := lib()
			if err != nil {
				return Revoked{}, err
			}
			inv, err := l.GetInvitation(in.InvitationID)
			if err != nil {
				return Revoked{}, err
			}
			if inv == nil {
				return Revoked{}, notFound("invitation_id", "invitation", in.InvitationID)
			}
			if err := l.RequireRole(inv.WorkspaceID, actor(ctx), admin.RoleAdmin); err != nil {
				return Revoked{}, err
			}
			ok, err := l.Keyed(c).RevokeInvitation(in.InvitationID)
			return Revoked{Revoked: ok}, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[InvitationListInput, InvitationList]{
		Name: "admin_invitation_list", Title: "List invitations", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's invitations, newest first, without their tokens.",
		Handler: func(ctx context.Context, in InvitationListInput) (InvitationList, error) {
			l, err := lib()
			if err != nil {
				return InvitationList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleAdmin); err != nil {
				return InvitationList{}, err
			}
			is, err := l.ListInvitations(in.WorkspaceID, admin.ListInvitationsOptions{Status: in.Status, Page: admin.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && is == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return InvitationList{Invitations: is, Count: len(is)}, err
		},
	})

	sdk.AddTool(a.p, sdk.Tool[ProjectCreateInput, *admin.Project]{
		Name: "admin_project_create", Title: "Create workspace project", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Create a project in a workspace; task_create accepts its slug moments later.",
		Handler: keyed(a, "admin_project_create", nil, func(ctx context.Context, in ProjectCreateInput, c *store.Call) (*admin.Project, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if err := l.RequireRole(in.WorkspaceID, by, admin.RoleAdmin); err != nil {
				return nil, err
			}
			p, err := l.Keyed(c).CreateProject(in.WorkspaceID, admin.CreateProjectOptions{Name: in.Name, Slug: in.Slug, Description: in.Description, Metadata: in.Metadata, CreatedBy: by.ID})
			a.published()
			return p, err
		}),
	})
	sdk.AddTool(a.p, sdk.Tool[ProjectIDInput, *admin.Project]{
		Name: "admin_project_get", Title: "Get project", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace project by id or slug.",
		Handler: func(ctx context.Context, in ProjectIDInput) (*admin.Project, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			return projectFor(ctx, l, in.ProjectID, admin.RoleViewer)
		},
	})
	sdk.AddTool(a.p, sdk.Tool[ProjectListInput, ProjectList]{
		Name: "admin_project_list", Title: "List projects", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's projects, oldest first.",
		Handler: func(ctx context.Context, in ProjectListInput) (ProjectList, error) {
			l, err := lib()
			if err != nil {
				return ProjectList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), admin.RoleViewer); err != nil {
				return ProjectList{}, err
			}
			ps, err := l.ListProjects(in.WorkspaceID, admin.ListProjectsOptions{Status: in.Status, Page: admin.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && ps == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return ProjectList{Projects: ps, Count: len(ps)}, err
		},
	})
	sdk.AddTool(a.p, sdk.Tool[ProjectUpdateInput, *admin.Project]{
		Name: "admin_project_update", Title: "Update project", HonoursIdempotency: true,
		Description: "Change a project's name, description or metadata.",
		Handler: keyed(a, "admin_project_update", nil, func(ctx context.Context, in ProjectUpdateInput, c *store.Call) (*admin.Project, error) {
			l, err := lib()
			if err != nil {
				return nil, err
			}
			cur, err := projectFor(ctx, l, in.ProjectID, admin.RoleAdmin)
			if err != nil {
				return nil, err
			}
			p, err := l.Keyed(c).UpdateProject(cur.ID, admin.ProjectUpdates{Name: in.Name, Description: in.Description, Metadata: in.Metadata})
			if err == nil && p == nil {
				err = notFound("project_id", "project", in.ProjectID)
			}
			a.published()
			return p, err
		}),
	})
	for _, op := range []struct {
		name, title, desc string
		f                 func(l *admin.Admin, id string) (*admin.Project, error)
	}{
		{"admin_project_archive", "Archive project", "Archive a project: its tasks stay readable, new tasks under its slug are refused.", (*admin.Admin).ArchiveProject},
		{"admin_project_unarchive", "Unarchive project", "Make an archived project active again.", (*admin.Admin).UnarchiveProject},
	} {
		sdk.AddTool(a.p, sdk.Tool[ProjectIDInput, *admin.Project]{
			Name: op.name, Title: op.title, Description: op.desc, Idempotent: true, HonoursIdempotency: true,
			Handler: keyed(a, op.name, nil, func(ctx context.Context, in ProjectIDInput, c *store.Call) (*admin.Project, error) {
				l, err := lib()
				if err != nil {
					return nil, err
				}
				cur, err := projectFor(ctx, l, in.ProjectID, admin.RoleAdmin)
				if err != nil {
					return nil, err
				}
				p, err := op.f(l.Keyed(c), cur.ID)
				if err == nil && p == nil {
					err = notFound("project_id", "project", in.ProjectID)
				}
				a.published()
				return p, err
			}),
		})
	}
	sdk.AddTool(a.p, sdk.Tool[ProjectIDInput, admin.DeleteResult]{
		Name: "admin_project_delete", Title: "Delete project", Destructive: true, HonoursIdempotency: true,
		Description: "Delete a workspace project and free its slug.",
		Handler: keyed(a, "admin_project_delete", nil, func(ctx context.Context, in ProjectIDInput, c *store.Call) (admin.DeleteResult, error) {
			l, err := lib()
			if err != nil {
				return admin.DeleteResult{}, err
			}
			cur, err := projectFor(ctx, l, in.ProjectID, admin.RoleAdmin)
			if err != nil {
				return admin.DeleteResult{}, err
			}
			r, err := l.Keyed(c).DeleteProject(cur.ID)
			if err == nil && !r.Success {
				err = notFound("project_id", "project", in.ProjectID)
			}
			a.published()
			return r, err
		}),
	})
}

// grantRole is the role needed to give someone role: owner to make an
// owner (this is how ownership is transferred), admin otherwise.
func grantRole(role string) string {
	if role == admin.RoleOwner {
		return admin.RoleOwner
	}
	return admin.RoleAdmin
}

// projectFor resolves a project id or slug (404 when unknown) and checks
// the caller's role in its workspace.
func projectFor(ctx context.Context, l *admin.Admin, idOrSlug, role string) (*admin.Project, error) {
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
