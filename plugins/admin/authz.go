package admin

import (
	"context"

	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/webhooks"
	"github.com/cairn-mcp/cairn/sdk"
)

// Authorization inside the admin area (docs/decisions.md D22). The host has
// already checked the caller's scopes against the tool's annotations; here
// workspace roles and key ownership decide. The rules themselves live in
// the library (accounts.RequireRole, accounts.CanManageKey, accounts.ScopeCeiling);
// this file turns a tool call's principal into an accounts.Actor and applies
// them to webhooks, which belong to a workspace or, unscoped, to the
// operator.

// actor is the principal of the call running in ctx.
func actor(ctx context.Context) accounts.Actor {
	c := sdk.CallerFrom(ctx)
	return accounts.Actor{ID: c.ID, Operator: c.Operator(), Scopes: c.Scopes}
}

// requireOperator refuses everyone but the local operator.
func requireOperator(by accounts.Actor, field, what string) error {
	if by.Operator {
		return nil
	}
	e := accounts.Forbidden("operator", "%s is reserved to the local operator (cairn over stdio or the CLI)", what)
	if field != "" {
		e = e.With("field", field)
	}
	return e
}

// canSeeWebhook: viewers of its workspace; the operator for unscoped ones.
func canSeeWebhook(lib *accounts.Admin, w *webhooks.Webhook, by accounts.Actor) error {
	return webhookRole(lib, w, by, accounts.RoleViewer)
}

// canManageWebhook: admins of its workspace; the operator for unscoped ones.
func canManageWebhook(lib *accounts.Admin, w *webhooks.Webhook, by accounts.Actor) error {
	return webhookRole(lib, w, by, accounts.RoleAdmin)
}

func webhookRole(lib *accounts.Admin, w *webhooks.Webhook, by accounts.Actor, role string) error {
	if w.WorkspaceID == nil {
		return requireOperator(by, "webhook_id", "webhook "+w.ID+", which receives every workspace's events,")
	}
	return lib.RequireRole(*w.WorkspaceID, by, role)
}

// visibleWorkspaces returns, for a caller who is not the operator, the
// workspaces where it holds at least role; nil means every workspace.
func visibleWorkspaces(lib *accounts.Admin, by accounts.Actor, role string) (map[string]bool, error) {
	if by.Operator {
		return nil, nil
	}
	return lib.MemberWorkspaces(by.ID, role)
}
