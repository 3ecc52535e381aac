package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

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
	Members []accounts.Member `json:"members"`
	Count   int               `json:"count"`
}

// Removed is the output of removals.
type Removed struct {
	Removed bool `json:"removed"`
}

// memberAdd declares admin_member_add.
func (a *Area) memberAdd() sdk.Tool[MemberAddInput, *accounts.Member] {
	return sdk.Tool[MemberAddInput, *accounts.Member]{
		Name: "admin_member_add", Title: "Add member", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Add a user to a workspace with a role (the local operator only; others invite with admin_invitation_create).",
		Handler: keyed(a, "admin_member_add", nil, func(ctx context.Context, in MemberAddInput, c *store.Call) (*accounts.Member, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if !by.Operator {
				// A user joins by accepting an invitation, or by the
				// operator adding them (docs/decisions.md D35).
				return nil, accounts.Forbidden("operator", "a key cannot add a member: %s joins workspace %s by accepting an invitation (admin_invitation_create, then admin_invitation_accept with their own key), or the local operator adds them (`cairn admin members add`)", in.UserID, in.WorkspaceID).With("field", "user_id")
			}
			m, err := l.Keyed(c).AddMember(in.WorkspaceID, accounts.AddMemberOptions{UserID: in.UserID, Role: in.Role, InvitedBy: by.ID, Metadata: in.Metadata, Operator: by.Operator})
			a.published()
			return m, err
		}),
	}
}

// memberGet declares admin_member_get.
func (a *Area) memberGet() sdk.Tool[MemberInput, *accounts.Member] {
	return sdk.Tool[MemberInput, *accounts.Member]{
		Name: "admin_member_get", Title: "Get member", ReadOnly: true, Idempotent: true,
		Description: "Show a workspace member's role, join time and inviter.",
		Handler: func(ctx context.Context, in MemberInput) (*accounts.Member, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleViewer); err != nil {
				return nil, err
			}
			m, err := l.GetMember(in.WorkspaceID, in.UserID)
			if err == nil && m == nil {
				err = notFound("user_id", "member", in.UserID)
			}
			return m, err
		},
	}
}

// memberList declares admin_member_list.
func (a *Area) memberList() sdk.Tool[MemberListInput, MemberList] {
	return sdk.Tool[MemberListInput, MemberList]{
		Name: "admin_member_list", Title: "List members", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's members, owners first.",
		Handler: func(ctx context.Context, in MemberListInput) (MemberList, error) {
			l, err := a.library()
			if err != nil {
				return MemberList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleViewer); err != nil {
				return MemberList{}, err
			}
			ms, err := l.ListMembers(in.WorkspaceID, accounts.ListMembersOptions{Role: in.Role, Page: accounts.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && ms == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return MemberList{Members: ms, Count: len(ms)}, err
		},
	}
}

// memberUpdateRole declares admin_member_update_role.
func (a *Area) memberUpdateRole() sdk.Tool[MemberRoleInput, *accounts.Member] {
	return sdk.Tool[MemberRoleInput, *accounts.Member]{
		Name: "admin_member_update_role", Title: "Change member role", HonoursIdempotency: true,
		Description: "Change a member's role; only an owner grants or changes the owner role.",
		Handler: keyed(a, "admin_member_update_role", nil, func(ctx context.Context, in MemberRoleInput, c *store.Call) (*accounts.Member, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			need := grantRole(in.Role)
			if cur, err := l.GetMember(in.WorkspaceID, in.UserID); err == nil && cur != nil && cur.Role == accounts.RoleOwner {
				need = accounts.RoleOwner // changing an owner
			}
			if err := l.RequireRole(in.WorkspaceID, by, need); err != nil {
				return nil, err
			}
			m, err := l.Keyed(c).UpdateMemberRoleAs(in.WorkspaceID, in.UserID, in.Role, by)
			a.published()
			return m, err
		}),
	}
}

// memberRemove declares admin_member_remove.
func (a *Area) memberRemove() sdk.Tool[MemberInput, Removed] {
	return sdk.Tool[MemberInput, Removed]{
		Name: "admin_member_remove", Title: "Remove member", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Remove a member from a workspace, or leave it yourself.",
		Handler: keyed(a, "admin_member_remove", func(c *store.Call, _ MemberInput) {
			store.Present(c, func(ok bool) Removed { return Removed{Removed: ok} })
		}, func(ctx context.Context, in MemberInput, c *store.Call) (Removed, error) {
			l, err := a.library()
			if err != nil {
				return Removed{}, err
			}
			by := actor(ctx)
			need := accounts.RoleAdmin
			if in.UserID == by.ID {
				need = accounts.RoleViewer // leaving
			}
			if err := l.RequireRole(in.WorkspaceID, by, need); err != nil {
				return Removed{}, err
			}
			ok, err := l.Keyed(c).RemoveMemberAs(in.WorkspaceID, in.UserID, by)
			a.published()
			return Removed{Removed: ok}, err
		}),
	}
}

// grantRole is the role needed to give someone role: owner to make an
// owner (this is how ownership is transferred), admin otherwise.
func grantRole(role string) string {
	if role == accounts.RoleOwner {
		return accounts.RoleOwner
	}
	return accounts.RoleAdmin
}
