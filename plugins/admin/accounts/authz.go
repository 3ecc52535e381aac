package accounts

import (
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Actor is who performs an operation (docs/decisions.md D22). The local operator
// (stdio, the CLI) holds every right; everyone else is a user whose
// workspace roles and, for API-key callers, key scopes decide.
type Actor struct {
	// ID is the user id: an API key's user, CAIRN_AGENT_ID, ...
	ID string
	// Operator is true for the local operator.
	Operator bool
	// Scopes are an API-key caller's scopes (read, write, admin); ignored
	// for the operator.
	Scopes []string
}

// HasScope reports whether the actor holds scope (the operator holds all).
func (a Actor) HasScope(scope string) bool {
	return a.Operator || slices.Contains(a.Scopes, scope)
}

// roleRank orders the roles: a higher rank includes every right of a lower.
var roleRank = map[string]int{RoleViewer: 1, RoleMember: 2, RoleAdmin: 3, RoleOwner: 4}

// RoleAtLeast reports whether role includes every right of want.
func RoleAtLeast(role, want string) bool {
	return roleRank[role] >= roleRank[want] && roleRank[role] > 0
}

// Forbidden is the 403 ERR_FORBIDDEN refusal naming what was required: a
// role ("admin"), a scope, "self" (only the user in question may, or the
// operator) or "operator" (only the local operator may).
func Forbidden(required, format string, args ...any) *errs.Error {
	return errs.Newf(403, errs.Forbidden, format, args...).With("required", required)
}

// RoleOf returns the actor's role in a workspace ("" when not a member).
// A 404 for an unknown workspace.
func (a *Admin) RoleOf(workspaceID, userID string) (string, error) {
	var role string
	err := a.st.View(func(tx store.Tx) error {
		ws, err := getWorkspace(tx, workspaceID)
		if err != nil {
			return err
		}
		if ws == nil {
			return errs.NotFoundf(errs.NotFound, "workspace_id", "workspace %s does not exist", workspaceID)
		}
		m, err := getMember(tx, workspaceID, userID)
		if m != nil {
			role = m.Role
		}
		return err
	})
	return role, internal(err)
}

// RequireRole checks that the actor holds at least role in the workspace:
// viewer reads; member works in projects; admin manages members,
// invitations, projects, webhooks and workspace keys; owner also deletes
// the workspace and transfers ownership. The operator passes; an unknown
// workspace is a 404; a refusal is 403 ERR_FORBIDDEN with details.required
// naming the role.
func (a *Admin) RequireRole(workspaceID string, by Actor, role string) error {
	if by.Operator {
		return nil
	}
	have, err := a.RoleOf(workspaceID, by.ID)
	if err != nil {
		return err
	}
	if !RoleAtLeast(have, role) {
		if have == "" {
			return Forbidden(role, "%s is not a member of workspace %s; this needs the %s role there (ask one of its admins)", by.ID, workspaceID, role).With("workspace_id", workspaceID)
		}
		return Forbidden(role, "%s is %s in workspace %s; this needs the %s role (ask one of its owners)", by.ID, have, workspaceID, role).With("workspace_id", workspaceID)
	}
	return nil
}

// MemberWorkspaces returns the ids of the workspaces where userID holds at
// least role.
func (a *Admin) MemberWorkspaces(userID, role string) (map[string]bool, error) {
	out := map[string]bool{}
	err := a.st.View(func(tx store.Tx) error {
		return eachMember(tx, func(m Member) {
			if m.UserID == userID && RoleAtLeast(m.Role, role) {
				out[m.WorkspaceID] = true
			}
		})
	})
	return out, internal(err)
}

// CanManageKey decides whether the actor may see and manage key k (get,
// list, usage, audit log, update, revoke, rotate, count a request): the
// operator, and the key's own user; nobody else (docs/decisions.md D35). A
// workspace role is a right over the workspace's resources, never over a
// person's keys, so a workspace admin cannot reach a member's key even when
// it is scoped to that workspace. A refusal is 403 with details.required
// "self".
func (a *Admin) CanManageKey(k *APIKey, by Actor) error {
	if by.Operator || k.UserID == by.ID {
		return nil
	}
	return Forbidden("self", "key %s belongs to %s; only %s's own keys or the local operator (cairn over stdio or the CLI) manage it", k.ID, k.UserID, k.UserID).With("field", "key_id")
}

// ReservedIdentity reports whether user is a name the host records for the
// local operator or for itself (docs/decisions.md D4, D35): "operator" and
// "operator:<name>" (the CLI's identity without CAIRN_AGENT_ID), "unknown"
// (a stdio session with neither CAIRN_AGENT_ID nor a client name) and
// "cairn-host" (the host's own calls). Only the operator creates or rotates
// keys for them, so no key can make records that read as the operator's.
func ReservedIdentity(user string) bool {
	return user == "operator" || strings.HasPrefix(user, "operator:") || user == "unknown" || user == "cairn-host"
}

// RequireUnreserved refuses, unless the actor is the operator, to mint a
// key for a reserved identity (ReservedIdentity): 403 with details.required
// "operator".
func RequireUnreserved(field, user string, by Actor) error {
	if by.Operator || !ReservedIdentity(user) {
		return nil
	}
	return Forbidden("operator", "%s is an identity the host records for the local operator or itself; only the local operator (cairn over stdio or the CLI) mints keys for it", user).With("field", field)
}

// ScopeCeiling checks that scopes grant nothing the actor lacks: no key can
// be created, rotated or updated to more than its creator holds.
func ScopeCeiling(field string, scopes []string, by Actor) error {
	if by.Operator {
		return nil
	}
	for _, s := range scopes {
		if !by.HasScope(s) {
			return Forbidden(s, "%s would grant scope %q, which your own key does not hold; a key can grant only scopes its creator holds", field, s).With("field", field)
		}
	}
	return nil
}

// CeilingScopes is the default scope set (read and write) cut down to what
// the actor holds.
func CeilingScopes(by Actor) []string {
	out := []string{}
	for _, s := range []string{"read", "write"} {
		if by.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}
