package accounts

import (
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A key is its user's alone (docs/decisions.md D35): the operator and the
// key's own user manage it; a workspace admin or owner of the workspace the
// key is scoped to does not, whatever their scopes.
func TestCanManageKeyIsSelfOrOperator(t *testing.T) {
	a, _, _ := newAdmin(t)
	ws, err := a.CreateWorkspace(CreateWorkspaceOptions{Name: "W", OwnerID: "olivia"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddMember(ws.ID, AddMemberOptions{UserID: "uma", Role: RoleMember, InvitedBy: "olivia"}); err != nil {
		t.Fatal(err)
	}
	k, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "uma", UserID: "uma", WorkspaceID: &ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"read", "write", "admin"}
	for _, c := range []struct {
		name     string
		by       Actor
		required string
	}{
		{"the operator", Actor{ID: "root", Operator: true}, ""},
		{"the key's user", Actor{ID: "uma", Scopes: []string{"read"}}, ""},
		{"the owner of the key's workspace", Actor{ID: "olivia", Scopes: all}, "self"},
		{"a stranger", Actor{ID: "carol", Scopes: all}, "self"},
	} {
		err := a.CanManageKey(k, c.by)
		if c.required == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		e, ok := errs.As(err)
		if !ok || e.Status != 403 || e.Details["required"] != c.required {
			t.Errorf("%s: %v, want 403 required=%s", c.name, err, c.required)
		}
	}
}

func TestReservedIdentities(t *testing.T) {
	for user, reserved := range map[string]bool{
		"operator": true, "operator:root": true, "unknown": true, "cairn-host": true,
		"operatorx": false, "alice": false, "uma": false, "": false,
	} {
		if got := ReservedIdentity(user); got != reserved {
			t.Errorf("ReservedIdentity(%q) = %v, want %v", user, got, reserved)
		}
		err := RequireUnreserved("user_id", user, Actor{ID: user, Scopes: []string{"admin"}})
		if e, ok := errs.As(err); reserved != (ok && e.Details["required"] == "operator") {
			t.Errorf("RequireUnreserved(%q) by a key: %v", user, err)
		}
		if err := RequireUnreserved("user_id", user, Actor{ID: "root", Operator: true}); err != nil {
			t.Errorf("RequireUnreserved(%q) by the operator: %v", user, err)
		}
	}
}
