package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Callers as the host hands them over: the local operator, and API-key
// users with their key's scopes.
func operatorCtx() context.Context {
	return sdk.WithCaller(context.Background(), sdk.Caller{ID: "root", Source: "env"})
}

func keyCtx(user string, scopes ...string) context.Context {
	return sdk.WithCaller(context.Background(), sdk.Caller{ID: user, Source: "api_key", Scopes: scopes})
}

var allScopes = []string{"read", "write", "admin"}

// call invokes a tool as the caller in ctx and decodes a success.
func call(t *testing.T, p *sdk.Plugin, ctx context.Context, tool string, args any) (map[string]any, sdk.Result) {
	t.Helper()
	raw, _ := json.Marshal(args)
	res := sdktest.Invoke(ctx, p, tool, raw)
	var out map[string]any
	if res.Err == nil {
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("%s: output %s: %v", tool, res.Output, err)
		}
	}
	return out, res
}

// must invokes a tool that has to succeed.
func must(t *testing.T, p *sdk.Plugin, ctx context.Context, tool string, args any) map[string]any {
	t.Helper()
	out, res := call(t, p, ctx, tool, args)
	if res.Err != nil {
		t.Fatalf("%s %v: %+v", tool, args, res.Err)
	}
	return out
}

// fixture is a workspace with one member per role, a project, an archived
// project, a pending invitation and a webhook scoped to the workspace.
type fixture struct {
	p                      *sdk.Plugin
	dir                    string
	ws, project, archived  string
	invitation, webhook    string
	receiver               string
	memberKey, outsiderKey string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Setenv("CAIRN_ENV", "development") // the loopback receiver
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	p := configuredAt(t, dir)
	op := operatorCtx()
	f := &fixture{p: p, dir: dir, receiver: srv.URL}
	f.ws = must(t, p, op, "admin_workspace_create", map[string]any{"name": "Team", "owner_id": "owner"})["id"].(string)
	for user, role := range map[string]string{"adm": "admin", "mem": "member", "vie": "viewer", "extra": "viewer"} {
		must(t, p, op, "admin_member_add", map[string]any{"workspace_id": f.ws, "user_id": user, "role": role})
	}
	f.project = must(t, p, op, "admin_project_create", map[string]any{"workspace_id": f.ws, "name": "Web"})["id"].(string)
	f.archived = must(t, p, op, "admin_project_create", map[string]any{"workspace_id": f.ws, "name": "Old"})["id"].(string)
	must(t, p, op, "admin_project_archive", map[string]any{"project_id": f.archived})
	f.invitation = must(t, p, op, "admin_invitation_create", map[string]any{"workspace_id": f.ws, "email": "new@example.com", "role": "member"})["id"].(string)
	reg := must(t, p, op, "admin_webhook_register", map[string]any{"url": srv.URL, "workspace_id": f.ws})
	f.webhook = reg["webhook"].(map[string]any)["id"].(string)
	f.memberKey = must(t, p, op, "admin_key_create", map[string]any{"name": "mem", "user_id": "mem", "workspace_id": f.ws})["id"].(string)
	f.outsiderKey = must(t, p, op, "admin_key_create", map[string]any{"name": "alice", "user_id": "alice"})["id"].(string)
	return f
}

// clone is a fresh copy of f's store under a new plugin, so each case of a
// table starts from the same state without building it again.
func (f *fixture) clone(t *testing.T) *fixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(f.dir, "admin.db"))
	if err != nil {
		t.Fatal(err)
	}
	c := *f
	c.dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(c.dir, "admin.db"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c.p = configuredAt(t, c.dir)
	return &c
}

// roles in the table: every workspace role, and a user of no role.
var roleUsers = []struct{ user, role string }{
	{"owner", "owner"}, {"adm", "admin"}, {"mem", "member"}, {"vie", "viewer"}, {"outsider", ""},
}

// rank orders what an operation needs; "operator" is beyond every role.
var rank = map[string]int{"": 0, "viewer": 1, "member": 2, "admin": 3, "owner": 4, "operator": 5}

func TestWorkspaceRolesPerAdminOperation(t *testing.T) {
	ops := []struct {
		tool string
		need string // the least role that may
		args func(f *fixture) map[string]any
	}{
		{"admin_workspace_get", "viewer", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		{"admin_workspace_stats", "viewer", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		{"admin_workspace_update", "admin", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws, "name": "Renamed"} }},
		{"admin_workspace_delete", "owner", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		{"admin_member_get", "viewer", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws, "user_id": "mem"} }},
		{"admin_member_list", "viewer", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		// Membership needs the user's consent: no role adds someone
		// (docs/decisions.md D35); they accept an invitation instead.
		{"admin_member_add", "operator", func(f *fixture) map[string]any {
			return map[string]any{"workspace_id": f.ws, "user_id": "newbie", "role": "viewer"}
		}},
		{"admin_member_update_role", "admin", func(f *fixture) map[string]any {
			return map[string]any{"workspace_id": f.ws, "user_id": "extra", "role": "member"}
		}},
		// Transferring ownership: only an owner grants the owner role.
		{"admin_member_update_role", "owner", func(f *fixture) map[string]any {
			return map[string]any{"workspace_id": f.ws, "user_id": "extra", "role": "owner"}
		}},
		{"admin_member_remove", "admin", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws, "user_id": "extra"} }},
		{"admin_invitation_create", "admin", func(f *fixture) map[string]any {
			return map[string]any{"workspace_id": f.ws, "email": "dev@example.com", "role": "member"}
		}},
		{"admin_invitation_list", "admin", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		{"admin_invitation_revoke", "admin", func(f *fixture) map[string]any { return map[string]any{"invitation_id": f.invitation} }},
		{"admin_project_create", "admin", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws, "name": "Fresh"} }},
		{"admin_project_get", "viewer", func(f *fixture) map[string]any { return map[string]any{"project_id": f.project} }},
		{"admin_project_list", "viewer", func(f *fixture) map[string]any { return map[string]any{"workspace_id": f.ws} }},
		{"admin_project_update", "admin", func(f *fixture) map[string]any { return map[string]any{"project_id": f.project, "name": "Web 2"} }},
		{"admin_project_archive", "admin", func(f *fixture) map[string]any { return map[string]any{"project_id": f.project} }},
		{"admin_project_unarchive", "admin", func(f *fixture) map[string]any { return map[string]any{"project_id": f.archived} }},
		{"admin_project_delete", "admin", func(f *fixture) map[string]any { return map[string]any{"project_id": f.project} }},
		{"admin_webhook_register", "admin", func(f *fixture) map[string]any { return map[string]any{"url": f.receiver, "workspace_id": f.ws} }},
		{"admin_webhook_get", "viewer", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_deliveries", "viewer", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_update", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook, "description": "x"} }},
		{"admin_webhook_pause", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_resume", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_rotate_secret", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_test", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_webhook_unregister", "admin", func(f *fixture) map[string]any { return map[string]any{"webhook_id": f.webhook} }},
		{"admin_event_trigger", "admin", func(f *fixture) map[string]any {
			return map[string]any{"event_type": "workspace.updated", "workspace_id": f.ws}
		}},
		{"admin_key_create", "viewer", func(f *fixture) map[string]any { return map[string]any{"name": "mine", "workspace_id": f.ws} }},
	}
	base := newFixture(t)
	for _, op := range ops {
		for _, ru := range roleUsers {
			allowed := rank[ru.role] >= rank[op.need]
			name := op.tool + "/" + op.need + "/as_" + ru.user
			t.Run(name, func(t *testing.T) {
				f := base.clone(t)
				_, res := call(t, f.p, keyCtx(ru.user, allScopes...), op.tool, op.args(f))
				if allowed {
					if res.Err != nil {
						t.Fatalf("%s (%s) refused: %+v", ru.user, ru.role, res.Err)
					}
					return
				}
				if res.Err == nil || res.Status != 403 || res.Err.Code != "ERR_FORBIDDEN" || res.Err.Details["required"] != op.need {
					t.Fatalf("%s (%s): want 403 ERR_FORBIDDEN required=%s, got %d %+v", ru.user, ru.role, op.need, res.Status, res.Err)
				}
			})
		}
	}
}

func TestOperatorBypassesRolesAndAnyoneMayLeave(t *testing.T) {
	f := newFixture(t)
	// The operator is no member, yet holds every right.
	must(t, f.p, operatorCtx(), "admin_member_update_role", map[string]any{"workspace_id": f.ws, "user_id": "extra", "role": "owner"})
	must(t, f.p, operatorCtx(), "admin_workspace_delete", map[string]any{"workspace_id": f.ws})
	g := newFixture(t)
	// A viewer may leave (remove themselves), not remove others.
	_, res := call(t, g.p, keyCtx("vie", allScopes...), "admin_member_remove", map[string]any{"workspace_id": g.ws, "user_id": "extra"})
	refused(t, res, "admin")
	if out := must(t, g.p, keyCtx("extra", allScopes...), "admin_member_remove", map[string]any{"workspace_id": g.ws, "user_id": "extra"}); out["removed"] != true {
		t.Fatalf("leave: %v", out)
	}
	// Non-members do not see the workspace in lists.
	if out := must(t, g.p, keyCtx("outsider", allScopes...), "admin_workspace_list", map[string]any{}); out["count"].(float64) != 0 {
		t.Fatalf("outsider lists %v", out)
	}
	if out := must(t, g.p, keyCtx("mem", allScopes...), "admin_workspace_list", map[string]any{}); out["count"].(float64) != 1 {
		t.Fatalf("member lists %v", out)
	}
	if out := must(t, g.p, keyCtx("outsider", allScopes...), "admin_webhook_list", map[string]any{}); out["count"].(float64) != 0 {
		t.Fatalf("outsider lists webhooks %v", out)
	}
	if out := must(t, g.p, keyCtx("vie", allScopes...), "admin_webhook_list", map[string]any{}); out["count"].(float64) != 1 {
		t.Fatalf("viewer lists webhooks %v", out)
	}
}

// refused asserts a 403 ERR_FORBIDDEN naming required.
func refused(t *testing.T, res sdk.Result, required string) {
	t.Helper()
	if res.Err == nil || res.Status != 403 || res.Err.Code != "ERR_FORBIDDEN" || res.Err.Details["required"] != required {
		t.Fatalf("want 403 ERR_FORBIDDEN required=%s, got %d %+v", required, res.Status, res.Err)
	}
}

func TestKeyCeilings(t *testing.T) {
	cases := []struct {
		name     string
		ctx      func() context.Context
		tool     string
		args     func(f *fixture) map[string]any
		required string // "" = allowed
	}{
		{"carol mints a key for alice", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "user_id": "alice"} }, "self"},
		{"a member mints a key for another member", func() context.Context { return keyCtx("mem", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "user_id": "vie", "workspace_id": f.ws}
			}, "self"},
		// A workspace role is no right over a member's identity
		// (docs/decisions.md D35).
		{"a workspace admin mints a key for a member", func() context.Context { return keyCtx("adm", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "user_id": "mem", "workspace_id": f.ws}
			}, "self"},
		{"the workspace owner mints a key for a member", func() context.Context { return keyCtx("owner", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "user_id": "mem", "workspace_id": f.ws, "scopes": allScopes}
			}, "self"},
		{"a workspace admin mints a key for a non-member", func() context.Context { return keyCtx("adm", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "user_id": "alice", "workspace_id": f.ws}
			}, "self"},
		{"a member mints a workspace key for herself", func() context.Context { return keyCtx("mem", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "workspace_id": f.ws}
			}, ""},
		{"a non-member mints a workspace key for herself", func() context.Context { return keyCtx("alice", allScopes...) }, "admin_key_create",
			func(f *fixture) map[string]any {
				return map[string]any{"name": "x", "workspace_id": f.ws}
			}, "viewer"},
		{"a key mints a key for the operator", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "user_id": "operator"} }, "operator"},
		{"a key mints a key for the CLI's operator:<user>", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "user_id": "operator:root"} }, "operator"},
		{"a key mints a key for the host", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "user_id": "cairn-host"} }, "operator"},
		{"a read key mints a write key", func() context.Context { return keyCtx("carol", "read") }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "scopes": []string{"read", "write"}} }, "write"},
		{"a read,write key mints an admin key", func() context.Context { return keyCtx("carol", "read", "write") }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x", "scopes": []string{"admin"}} }, "admin"},
		{"an admin-only key mints a key with default scopes", func() context.Context { return keyCtx("carol", "admin") }, "admin_key_create",
			func(*fixture) map[string]any { return map[string]any{"name": "x"} }, "read"},
		{"carol revokes alice's key", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_revoke",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.outsiderKey} }, "self"},
		{"carol reads alice's key", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_get",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.outsiderKey} }, "self"},
		{"carol rotates alice's key", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_rotate",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.outsiderKey} }, "self"},
		{"carol counts a request on alice's key", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_check_rate_limit",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.outsiderKey} }, "self"},
		{"alice revokes her own key", func() context.Context { return keyCtx("alice", "read", "write") }, "admin_key_revoke",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.outsiderKey} }, ""},
		{"alice raises her own key to admin", func() context.Context { return keyCtx("alice", "read", "write") }, "admin_key_update",
			func(f *fixture) map[string]any {
				return map[string]any{"key_id": f.outsiderKey, "scopes": []string{"read", "write", "admin"}}
			}, "admin"},
		{"a workspace admin revokes a member's workspace key", func() context.Context { return keyCtx("adm", allScopes...) }, "admin_key_revoke",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.memberKey} }, "self"},
		{"the workspace owner updates a member's workspace key", func() context.Context { return keyCtx("owner", allScopes...) }, "admin_key_update",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.memberKey, "status": "revoked"} }, "self"},
		{"a viewer revokes a member's workspace key", func() context.Context { return keyCtx("vie", allScopes...) }, "admin_key_revoke",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.memberKey} }, "self"},
		{"a member revokes her own workspace key", func() context.Context { return keyCtx("mem", "admin") }, "admin_key_revoke",
			func(f *fixture) map[string]any { return map[string]any{"key_id": f.memberKey} }, ""},
		{"an API key registers a webhook for every workspace", func() context.Context { return keyCtx("owner", allScopes...) }, "admin_webhook_register",
			func(f *fixture) map[string]any { return map[string]any{"url": f.receiver} }, "operator"},
		{"an API key fires an event at every webhook", func() context.Context { return keyCtx("owner", allScopes...) }, "admin_event_trigger",
			func(*fixture) map[string]any { return map[string]any{"event_type": "workspace.updated"} }, "operator"},
		{"an API key creates a workspace for someone else", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_workspace_create",
			func(*fixture) map[string]any { return map[string]any{"name": "W", "owner_id": "alice"} }, "self"},
		{"an API key calls the host's authenticator", func() context.Context { return keyCtx("carol", allScopes...) }, "admin_key_authenticate",
			func(*fixture) map[string]any {
				return map[string]any{"key": "cairn_" + "0000000000000000000000000000000000000000000000000000000000000000"}
			}, "operator"},
	}
	base := newFixture(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := base.clone(t)
			_, res := call(t, f.p, c.ctx(), c.tool, c.args(f))
			if c.required == "" {
				if res.Err != nil {
					t.Fatalf("refused: %+v", res.Err)
				}
				return
			}
			refused(t, res, c.required)
		})
	}
}

func TestKeyDefaultsStayUnderTheCreatorsScopes(t *testing.T) {
	f := newFixture(t)
	k := must(t, f.p, keyCtx("carol", "read"), "admin_key_create", map[string]any{"name": "mine"})
	if got := k["scopes"].([]any); len(got) != 1 || got[0] != "read" {
		t.Fatalf("a read key minted scopes %v", got)
	}
	// A rotation may not mint more than the rotator holds: alice's key has
	// the admin scope (the operator gave it), alice's calling key does not.
	ak := must(t, f.p, operatorCtx(), "admin_key_create", map[string]any{"name": "a", "user_id": "alice", "scopes": allScopes})
	_, res := call(t, f.p, keyCtx("alice", "read", "write"), "admin_key_rotate", map[string]any{"key_id": ak["id"]})
	refused(t, res, "admin")
	// Lists show only what the caller may manage.
	l := must(t, f.p, keyCtx("carol", allScopes...), "admin_key_list", map[string]any{})
	for _, x := range l["keys"].([]any) {
		if x.(map[string]any)["user_id"] != "carol" {
			t.Fatalf("carol lists %v", x)
		}
	}
	// A workspace admin does not see a member's workspace key
	// (docs/decisions.md D35); the member does.
	l = must(t, f.p, keyCtx("adm", allScopes...), "admin_key_list", map[string]any{"workspace_id": f.ws})
	if l["count"].(float64) != 0 {
		t.Fatalf("workspace admin lists %v", l)
	}
	l = must(t, f.p, keyCtx("mem", "admin"), "admin_key_list", map[string]any{})
	if l["count"].(float64) != 1 || l["keys"].([]any)[0].(map[string]any)["id"] != f.memberKey {
		t.Fatalf("member lists %v", l)
	}
	// Accepting an invitation as someone else is refused.
	inv := must(t, f.p, operatorCtx(), "admin_invitation_create", map[string]any{"workspace_id": f.ws, "email": "z@example.com", "role": "viewer"})
	_, res = call(t, f.p, keyCtx("zed", "read", "write", "admin"), "admin_invitation_accept", map[string]any{"token": inv["token"], "user_id": "alice"})
	refused(t, res, "self")
	acc := must(t, f.p, keyCtx("zed", "read", "write", "admin"), "admin_invitation_accept", map[string]any{"token": inv["token"]})
	if acc["success"] != true || acc["member"].(map[string]any)["user_id"] != "zed" {
		t.Fatalf("accept %v", acc)
	}
}
