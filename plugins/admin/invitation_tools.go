package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk"
)

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
	Invitations []accounts.Invitation `json:"invitations"`
	Count       int                   `json:"count"`
}

// invitationCreate declares admin_invitation_create.
func (a *Area) invitationCreate() sdk.Tool[InviteInput, *accounts.Invitation] {
	return sdk.Tool[InviteInput, *accounts.Invitation]{
		Name: "admin_invitation_create", Title: "Invite member", SuccessStatus: 201, HonoursIdempotency: true,
		Description: "Invite someone to a workspace; the one-time token (valid 7 days) is in this result only.",
		Handler: keyed(a, "admin_invitation_create", secrets[InviteInput](inviteNotice, "token"), func(ctx context.Context, in InviteInput, c *store.Call) (*accounts.Invitation, error) {
			l, err := a.library()
			if err != nil {
				return nil, err
			}
			by := actor(ctx)
			if err := l.RequireRole(in.WorkspaceID, by, grantRole(in.Role)); err != nil {
				return nil, err
			}
			return l.Keyed(c).InviteMember(in.WorkspaceID, accounts.InviteMemberOptions{Email: in.Email, Role: in.Role, InvitedBy: by.ID, Message: in.Message, Operator: by.Operator})
		}),
	}
}

// invitationAccept declares admin_invitation_accept.
func (a *Area) invitationAccept() sdk.Tool[AcceptInput, accounts.AcceptResult] {
	return sdk.Tool[AcceptInput, accounts.AcceptResult]{
		Name: "admin_invitation_accept", Title: "Accept invitation", HonoursIdempotency: true,
		Description: "Redeem an invitation token to join its workspace with the invited role.",
		Handler: keyed(a, "admin_invitation_accept", nil, func(ctx context.Context, in AcceptInput, c *store.Call) (accounts.AcceptResult, error) {
			l, err := a.library()
			if err != nil {
				return accounts.AcceptResult{}, err
			}
			by := actor(ctx)
			user := in.UserID
			if !by.Operator {
				if user != "" && user != by.ID {
					return accounts.AcceptResult{}, accounts.Forbidden("self", "you can accept an invitation only as yourself (%s), not as %s: joining is %s's own consent", by.ID, user, user).With("field", "user_id")
				}
				user = by.ID
			}
			r, err := l.Keyed(c).AcceptInvitation(in.Token, user)
			a.published()
			return r, err
		}),
	}
}

// invitationRevoke declares admin_invitation_revoke.
func (a *Area) invitationRevoke() sdk.Tool[InvitationIDInput, Revoked] {
	return sdk.Tool[InvitationIDInput, Revoked]{
		Name: "admin_invitation_revoke", Title: "Revoke invitation", Destructive: true, Idempotent: true, HonoursIdempotency: true,
		Description: "Revoke a pending invitation so its token no longer works.",
		Handler: keyed(a, "admin_invitation_revoke", func(c *store.Call, _ InvitationIDInput) {
			store.Present(c, func(ok bool) Revoked { return Revoked{Revoked: ok} })
		}, func(ctx context.Context, in InvitationIDInput, c *store.Call) (Revoked, error) {
			l, err := a.library()
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
			if err := l.RequireRole(inv.WorkspaceID, actor(ctx), accounts.RoleAdmin); err != nil {
				return Revoked{}, err
			}
			ok, err := l.Keyed(c).RevokeInvitation(in.InvitationID)
			return Revoked{Revoked: ok}, err
		}),
	}
}

// invitationList declares admin_invitation_list.
func (a *Area) invitationList() sdk.Tool[InvitationListInput, InvitationList] {
	return sdk.Tool[InvitationListInput, InvitationList]{
		Name: "admin_invitation_list", Title: "List invitations", ReadOnly: true, Idempotent: true,
		Description: "List a workspace's invitations, newest first, without their tokens.",
		Handler: func(ctx context.Context, in InvitationListInput) (InvitationList, error) {
			l, err := a.library()
			if err != nil {
				return InvitationList{}, err
			}
			if err := l.RequireRole(in.WorkspaceID, actor(ctx), accounts.RoleAdmin); err != nil {
				return InvitationList{}, err
			}
			is, err := l.ListInvitations(in.WorkspaceID, accounts.ListInvitationsOptions{Status: in.Status, Page: accounts.Page{Limit: in.Limit, Offset: in.Offset}})
			if err == nil && is == nil {
				err = notFound("workspace_id", "workspace", in.WorkspaceID)
			}
			return InvitationList{Invitations: is, Count: len(is)}, err
		},
	}
}
