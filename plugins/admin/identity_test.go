package admin

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/doctable"
)

// Identity cannot be borrowed (docs/decisions.md D35). docs/security.md
// holds the table of who may act on a user's identity; this test reads it
// and runs every cell of its admin rows against the admin area, so the table
// and the code cannot drift apart. The core rows are
// TestIdentityTableCore's (plugins/core).

// identityFixture is a workspace owned by olivia with uma as a member, and
// the keys and invitation the table's actions need, all made by the
// operator.
type identityFixture struct {
	*fixture
	ws                      string
	umaKey, umaWSKey, opKey string
	token                   string
}

func newIdentityFixture(t *testing.T) *identityFixture {
	t.Helper()
	dir := t.TempDir()
	p := configuredAt(t, dir)
	op := operatorCtx()
	f := &identityFixture{fixture: &fixture{p: p, dir: dir}}
	f.ws = must(t, p, op, "admin_workspace_create", map[string]any{"name": "Olivia's", "owner_id": "olivia"})["id"].(string)
	must(t, p, op, "admin_member_add", map[string]any{"workspace_id": f.ws, "user_id": "uma", "role": "member"})
	f.umaKey = must(t, p, op, "admin_key_create", map[string]any{"name": "uma", "user_id": "uma", "scopes": allScopes})["id"].(string)
	f.umaWSKey = must(t, p, op, "admin_key_create", map[string]any{"name": "uma in ws", "user_id": "uma", "workspace_id": f.ws, "scopes": allScopes})["id"].(string)
	f.opKey = must(t, p, op, "admin_key_create", map[string]any{"name": "operator's", "user_id": "operator", "scopes": allScopes})["id"].(string)
	f.token = must(t, p, op, "admin_invitation_create", map[string]any{"workspace_id": f.ws, "email": "nick@example.com", "role": "member"})["token"].(string)
	return f
}

func (f *identityFixture) clone(t *testing.T) *identityFixture {
	c := *f
	c.fixture = f.fixture.clone(t)
	return &c
}

// identityScenario is one row of the table in Go: the user the action is
// about, the tool, and its arguments.
type identityScenario struct {
	subject, tool string
	args          func(f *identityFixture) map[string]any
}

var identityScenarios = map[string]identityScenario{
	"create a key for U": {"uma", "admin_key_create", func(*identityFixture) map[string]any {
		return map[string]any{"name": "for uma", "user_id": "uma", "scopes": allScopes}
	}},
	"create a key for U scoped to a workspace U is in": {"uma", "admin_key_create", func(f *identityFixture) map[string]any {
		return map[string]any{"name": "for uma", "user_id": "uma", "workspace_id": f.ws, "scopes": allScopes}
	}},
	"read U's workspace-scoped key": {"uma", "admin_key_get", func(f *identityFixture) map[string]any { return map[string]any{"key_id": f.umaWSKey} }},
	"read the usage of U's workspace-scoped key": {"uma", "admin_key_usage", func(f *identityFixture) map[string]any {
		return map[string]any{"key_id": f.umaWSKey}
	}},
	"read the audit log of U's workspace-scoped key": {"uma", "admin_key_audit_log", func(f *identityFixture) map[string]any {
		return map[string]any{"key_id": f.umaWSKey}
	}},
	"change U's workspace-scoped key": {"uma", "admin_key_update", func(f *identityFixture) map[string]any {
		return map[string]any{"key_id": f.umaWSKey, "name": "renamed"}
	}},
	"rotate U's workspace-scoped key": {"uma", "admin_key_rotate", func(f *identityFixture) map[string]any { return map[string]any{"key_id": f.umaWSKey} }},
	"revoke U's unscoped key":         {"uma", "admin_key_revoke", func(f *identityFixture) map[string]any { return map[string]any{"key_id": f.umaKey} }},
	"revoke U's workspace-scoped key": {"uma", "admin_key_revoke", func(f *identityFixture) map[string]any { return map[string]any{"key_id": f.umaWSKey} }},
	"count a request on U's workspace-scoped key": {"uma", "admin_key_check_rate_limit", func(f *identityFixture) map[string]any {
		return map[string]any{"key_id": f.umaWSKey}
	}},
	"create a workspace owned by U": {"uma", "admin_workspace_create", func(*identityFixture) map[string]any {
		return map[string]any{"name": "Uma's", "owner_id": "uma"}
	}},
	"add U to a workspace": {"nick", "admin_member_add", func(f *identityFixture) map[string]any {
		return map[string]any{"workspace_id": f.ws, "user_id": "nick", "role": "viewer"}
	}},
	"invite U to a workspace": {"nick", "admin_invitation_create", func(f *identityFixture) map[string]any {
		return map[string]any{"workspace_id": f.ws, "email": "nick@example.com", "role": "member"}
	}},
	"accept an invitation as U": {"nick", "admin_invitation_accept", func(f *identityFixture) map[string]any {
		return map[string]any{"token": f.token, "user_id": "nick"}
	}},
	"change U's role in a workspace": {"uma", "admin_member_update_role", func(f *identityFixture) map[string]any {
		return map[string]any{"workspace_id": f.ws, "user_id": "uma", "role": "admin"}
	}},
	"remove U from a workspace": {"uma", "admin_member_remove", func(f *identityFixture) map[string]any {
		return map[string]any{"workspace_id": f.ws, "user_id": "uma"}
	}},
	"create a key for the reserved identity `operator`": {"operator", "admin_key_create", func(*identityFixture) map[string]any {
		return map[string]any{"name": "another operator key", "user_id": "operator", "scopes": []string{"read"}}
	}},
	"rotate a key of the reserved identity `operator`": {"operator", "admin_key_rotate", func(f *identityFixture) map[string]any {
		return map[string]any{"key_id": f.opKey}
	}},
}

// identityRows reads docs/security.md's identity table.
func identityRows(t *testing.T) [][]string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	rows, err := doctable.Read(filepath.Join(filepath.Dir(here), "..", "..", "docs", "security.md"), "identity-table")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r) != 5 {
			t.Fatalf("identity table row %q has %d cells, want 5", r, len(r))
		}
	}
	return rows
}

// cellWant reads a cell: "yes" is allowed (""), "403 `x`" a refusal naming x.
func cellWant(t *testing.T, cell string) string {
	t.Helper()
	if cell == "yes" {
		return ""
	}
	req, ok := strings.CutPrefix(cell, "403 `")
	if !ok || !strings.HasSuffix(req, "`") {
		t.Fatalf("identity table cell %q is neither yes nor 403 `required`", cell)
	}
	return strings.TrimSuffix(req, "`")
}

func TestIdentityTable(t *testing.T) {
	rows := identityRows(t)
	base := newIdentityFixture(t)
	seen := map[string]bool{}
	for _, r := range rows {
		action, tool := r[0], strings.Trim(r[1], "`")
		if !strings.HasPrefix(tool, "admin_") {
			if !strings.HasPrefix(tool, "audit_") {
				t.Errorf("row %q: tool %s belongs to no area whose test reads the table", action, tool)
			}
			continue // plugins/core's TestIdentityTableCore
		}
		sc, ok := identityScenarios[action]
		if !ok {
			t.Errorf("row %q of docs/security.md has no scenario in identityScenarios", action)
			continue
		}
		seen[action] = true
		if sc.tool != tool {
			t.Errorf("row %q names %s, its scenario calls %s", action, tool, sc.tool)
			continue
		}
		callers := []struct {
			name string
			ctx  context.Context
		}{
			{"operator", operatorCtx()},
			{"own key", keyCtx(sc.subject, allScopes...)},
			{"the workspace owner's key", keyCtx("olivia", allScopes...)},
		}
		for i, c := range callers {
			want := cellWant(t, r[2+i])
			t.Run(action+"/"+c.name, func(t *testing.T) {
				f := base.clone(t)
				_, res := call(t, f.p, c.ctx, sc.tool, sc.args(f))
				if want == "" {
					if res.Err != nil {
						t.Fatalf("%s: refused, the table says yes: %d %+v", tool, res.Status, res.Err)
					}
					return
				}
				refused(t, res, want)
			})
		}
	}
	for action := range identityScenarios {
		if !seen[action] {
			t.Errorf("scenario %q is not a row of docs/security.md's identity table", action)
		}
	}
}
