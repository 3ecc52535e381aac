package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The authorization proof over `cairn serve --http` (docs/decisions.md D22), with
// real keys the operator created: scopes decide which class of tool a key
// may call, workspace roles decide which admin operation its user may run,
// a key manages only its own user's keys, and no key grants more than its
// creator holds. Every refusal is 403 ERR_FORBIDDEN with details.required.

// opCall runs an admin tool as the local operator and returns its result.
func opCall(t *testing.T, s *session, name string, args map[string]any) map[string]any {
	t.Helper()
	res := s.call(name, args)
	if res.IsError {
		t.Fatalf("operator %s: %s", name, res.Content[0].(mcp.TextContent).Text)
	}
	return structured(t, res)
}

// opKey creates a key for user with scopes as the operator.
func opKey(t *testing.T, s *session, user string, scopes ...string) (id, plaintext string) {
	t.Helper()
	k := opCall(t, s, "admin_key_create", map[string]any{"name": user + " " + fmt.Sprint(scopes), "user_id": user, "scopes": scopes})
	return k["id"].(string), k["plaintext_key"].(string)
}

// httpAgent is an MCP client of the HTTP server using one API key.
type httpAgent struct {
	t *testing.T
	c *client.Client
}

func newHTTPAgent(t *testing.T, url, key string) *httpAgent {
	t.Helper()
	return newChoiceAgent(t, url, key, nil)
}

// outcome is what a call came to: allowed, or the refusal's code and
// details.required.
type outcome struct {
	ok       bool
	code     string
	required string
	result   map[string]any
}

func (o outcome) String() string {
	if o.ok {
		return "allowed"
	}
	return fmt.Sprintf("%s required=%q", o.code, o.required)
}

func (a *httpAgent) call(name string, args map[string]any) outcome {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := a.c.CallTool(ctx, req)
	if err != nil {
		a.t.Fatalf("%s: %v", name, err)
	}
	body := structured(a.t, res)
	if !res.IsError {
		return outcome{ok: true, result: body}
	}
	e, _ := body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	o := outcome{code: fmt.Sprint(e["code"]), required: fmt.Sprint(d["required"]), result: body}
	if o.code == "ERR_FORBIDDEN" && metaStatus(res) != 403 {
		a.t.Errorf("%s: ERR_FORBIDDEN with _meta.status %v, want 403", name, metaStatus(res))
	}
	return o
}

// expect checks an outcome: allowed when required is "", else a 403
// naming required.
func expect(t *testing.T, what string, got outcome, required string) {
	t.Helper()
	switch {
	case required == "" && !got.ok:
		t.Errorf("%s: refused (%v), want allowed: %v", what, got, got.result)
	case required != "" && (got.ok || got.code != "ERR_FORBIDDEN" || got.required != required):
		t.Errorf("%s: %v, want ERR_FORBIDDEN required=%q: %v", what, got, required, got.result)
	}
}

func TestHTTPAuthorizationProof(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "CAIRN_TOOLSETS=core,admin")

	// The operator, over stdio, sets up a team and its keys.
	op := w.serve()
	ws := opCall(t, op, "admin_workspace_create", map[string]any{"name": "team", "owner_id": "olivia"})["id"].(string)
	for user, role := range map[string]string{"adam": "admin", "mia": "member", "vic": "viewer", "alice": "member"} {
		opCall(t, op, "admin_member_add", map[string]any{"workspace_id": ws, "user_id": user, "role": role})
	}
	ws2 := opCall(t, op, "admin_workspace_create", map[string]any{"name": "keys", "owner_id": "olivia"})["id"].(string)
	for user, role := range map[string]string{"adam": "admin", "mia": "member"} {
		opCall(t, op, "admin_member_add", map[string]any{"workspace_id": ws2, "user_id": user, "role": role})
	}
	all := []string{"read", "write", "admin"}
	scopeKeys := map[string]string{}
	for name, scopes := range map[string][]string{
		"read": {"read"}, "write": {"write"}, "admin": {"admin"}, "read+write": {"read", "write"}, "all": all,
	} {
		_, scopeKeys[name] = opKey(t, op, "sam", scopes...)
	}
	roleKeys := map[string]string{}
	for user, role := range map[string]string{"olivia": "owner", "adam": "admin", "mia": "member", "vic": "viewer", "carol": "none"} {
		_, roleKeys[role] = opKey(t, op, user, all...)
	}
	aliceKeyID, aliceKey := opKey(t, op, "alice", "read", "write")
	_, carolPlain := opKey(t, op, "carol", "read", "write")
	_, carolAdminRead := opKey(t, op, "carol", "admin", "read")
	carolRWID, _ := opKey(t, op, "carol", "read", "write")
	op.close()

	url := serveHTTP(t, w)

	t.Run("scope x tool class", func(t *testing.T) {
		classes := []struct {
			class, tool string
			args        map[string]any
			needs       string
		}{
			{"read-only tool", "task_list", map[string]any{"project": "web"}, "read"},
			{"write tool", "task_create", map[string]any{"title": "scoped", "project": "web"}, "write"},
			{"admin toolset, read-only", "admin_workspace_list", map[string]any{}, "admin"},
			{"admin toolset, write", "admin_key_list", map[string]any{}, "admin"},
		}
		has := map[string][]string{"read": {"read"}, "write": {"write"}, "admin": {"admin"}, "read+write": {"read", "write"}, "all": all}
		for name, key := range scopeKeys {
			a := newHTTPAgent(t, url, key)
			for _, c := range classes {
				want := c.needs
				for _, s := range has[name] {
					if s == c.needs {
						want = ""
					}
				}
				expect(t, fmt.Sprintf("key %s calls %s (%s)", name, c.tool, c.class), a.call(c.tool, c.args), want)
			}
		}
	})

	t.Run("role x admin operation", func(t *testing.T) {
		ops := []struct {
			tool  string
			args  func(role string) map[string]any
			needs string
		}{
			{"admin_workspace_get", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "viewer"},
			{"admin_workspace_stats", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "viewer"},
			{"admin_member_list", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "viewer"},
			{"admin_project_list", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "viewer"},
			{"admin_invitation_list", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "admin"},
			{"admin_workspace_update", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "description": "set by " + r}
			}, "admin"},
			{"admin_project_create", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "name": "project of " + r}
			}, "admin"},
			// No role adds a member: a user joins by accepting an
			// invitation, or the operator adds them (docs/decisions.md D35).
			{"admin_member_add", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "user_id": "added-by-" + r, "role": "viewer"}
			}, "operator"},
			{"admin_invitation_create", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "email": r + "-invite@example.com", "role": "member"}
			}, "admin"},
			// No webhook is registered yet, so the event goes nowhere; the
			// webhooks registered next subscribe to an event nothing here
			// fires, so nothing is delivered.
			{"admin_event_trigger", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "event_type": "usage.daily_reset", "payload": map[string]any{"by": r}}
			}, "admin"},
			{"admin_webhook_register", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "url": "https://93.184.215.14/hooks/" + r, "event_types": []string{"batch.failed"}}
			}, "admin"},
			{"admin_webhook_list", func(string) map[string]any { return map[string]any{} }, ""},
			{"admin_member_add", func(r string) map[string]any {
				return map[string]any{"workspace_id": ws, "user_id": "co-owner-of-" + r, "role": "owner"}
			}, "operator"},
			// Making an owner is how ownership is transferred.
			{"admin_member_update_role", func(string) map[string]any {
				return map[string]any{"workspace_id": ws, "user_id": "alice", "role": "owner"}
			}, "owner"},
			// Last: the owner's call archives the workspace.
			{"admin_workspace_delete", func(string) map[string]any { return map[string]any{"workspace_id": ws} }, "owner"},
		}
		rank := map[string]int{"none": 0, "viewer": 1, "member": 2, "admin": 3, "owner": 4, "operator": 5}
		agents := map[string]*httpAgent{}
		for role, key := range roleKeys {
			agents[role] = newHTTPAgent(t, url, key)
		}
		for _, op := range ops {
			for _, role := range []string{"none", "viewer", "member", "admin", "owner"} {
				want := ""
				if rank[role] < rank[op.needs] {
					want = op.needs
				}
				expect(t, fmt.Sprintf("%s (role %s) runs %s", role, role, op.tool), agents[role].call(op.tool, op.args(role)), want)
			}
		}
	})

	t.Run("keys of others and the scope ceiling", func(t *testing.T) {
		carol := newHTTPAgent(t, url, roleKeys["none"]) // carol: every scope, in no workspace
		expect(t, "carol mints a key for alice", carol.call("admin_key_create", map[string]any{"name": "for alice", "user_id": "alice"}), "self")
		expect(t, "carol mints a key for alice in a workspace she is not in", carol.call("admin_key_create", map[string]any{"name": "for alice", "user_id": "alice", "workspace_id": ws}), "self")
		expect(t, "carol revokes alice's key", carol.call("admin_key_revoke", map[string]any{"key_id": aliceKeyID}), "self")
		expect(t, "carol rotates alice's key", carol.call("admin_key_rotate", map[string]any{"key_id": aliceKeyID}), "self")
		expect(t, "carol updates alice's key", carol.call("admin_key_update", map[string]any{"key_id": aliceKeyID, "status": "revoked"}), "self")
		expect(t, "carol reads alice's key", carol.call("admin_key_get", map[string]any{"key_id": aliceKeyID}), "self")
		if got := carol.call("admin_key_list", map[string]any{}); !got.ok || fmt.Sprint(got.result["count"]) != "4" {
			t.Errorf("carol lists keys: %v, want her own 4: %v", got, got.result)
		} else {
			for _, k := range got.result["keys"].([]any) {
				if u := k.(map[string]any)["user_id"]; u != "carol" {
					t.Errorf("carol's key list shows a key of %v", u)
				}
			}
		}
		if got := carol.call("admin_workspace_list", map[string]any{}); !got.ok || fmt.Sprint(got.result["count"]) != "0" {
			t.Errorf("carol lists workspaces: %v, want none (she is in none): %v", got, got.result)
		}
		if got := newHTTPAgent(t, url, aliceKey).call("task_list", map[string]any{"project": "web"}); !got.ok {
			t.Errorf("alice's key after carol's attempts: %v", got)
		}

		// A workspace role is no right over a member's keys
		// (docs/decisions.md D35): a workspace admin mints none for a
		// member; it mints its own workspace key.
		adam := newHTTPAgent(t, url, roleKeys["admin"])
		expect(t, "a workspace admin mints a workspace key for a member", adam.call("admin_key_create", map[string]any{"name": "for mia", "user_id": "mia", "workspace_id": ws2, "scopes": []string{"read"}}), "self")
		got := adam.call("admin_key_create", map[string]any{"name": "adam's", "workspace_id": ws2, "scopes": []string{"read"}})
		expect(t, "a workspace admin mints its own workspace key", got, "")
		if got.ok {
			expect(t, "a workspace admin revokes it", adam.call("admin_key_revoke", map[string]any{"key_id": got.result["id"]}), "")
		}
		expect(t, "a workspace admin mints a key for a non-member", adam.call("admin_key_create", map[string]any{"name": "for carol", "user_id": "carol", "workspace_id": ws2}), "self")
		expect(t, "a workspace admin revokes a member's unscoped key", adam.call("admin_key_revoke", map[string]any{"key_id": aliceKeyID}), "self")

		plain := newHTTPAgent(t, url, carolPlain) // read, write: no admin scope
		expect(t, "a read+write key calls an admin tool", plain.call("admin_key_create", map[string]any{"name": "more"}), "admin")

		ar := newHTTPAgent(t, url, carolAdminRead) // admin, read: no write
		expect(t, "create a key with a scope its creator lacks", ar.call("admin_key_create", map[string]any{"name": "wider", "scopes": []string{"read", "write"}}), "write")
		expect(t, "update a key to a scope its creator lacks", ar.call("admin_key_update", map[string]any{"key_id": carolRWID, "scopes": []string{"read", "write", "admin"}}), "write")
		expect(t, "rotate a key holding a scope its creator lacks", ar.call("admin_key_rotate", map[string]any{"key_id": carolRWID}), "write")
		got = ar.call("admin_key_create", map[string]any{"name": "narrower"})
		expect(t, "create a key within the creator's scopes", got, "")
		if got.ok {
			if b, _ := json.Marshal(got.result["scopes"]); string(b) != `["read"]` {
				t.Errorf("default scopes of a key made by an admin+read key: %s, want [\"read\"]", b)
			}
		}
	})
}
