package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// Identity cannot be borrowed (docs/decisions.md D35), end to end over
// `cairn serve --http` with keys the operator made with `cairn admin keys
// create`. The chain an outside test once ran — a key of user-a with every
// scope creates a workspace, adds user-b, mints a workspace key for user-b,
// and with it revokes user-b's own key, mints an unscoped admin key in
// user-b's name and writes tasks and thoughts as user-b; the same for the
// operator — is refused at its first step that borrows an identity, and
// every later step is refused on its own, tried against operator-made
// fixtures.

// cliJSON runs `cairn admin … --json` as the operator and decodes it.
func cliJSON(t *testing.T, w *workspace, args ...string) map[string]any {
	t.Helper()
	code, out, stderr := runCairn(t, w, "", nil, append(append([]string{"admin"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("cairn admin %v: exit %d\n%s", args, code, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("cairn admin %v: %v\n%s", args, err, out)
	}
	return m
}

func TestHTTPIdentityCannotBeBorrowed(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "CAIRN_TOOLSETS=core,admin")
	// The operator issues the keys with the CLI.
	_, aKey := createKey(t, w, "--name", "a", "--user", "user-a", "--scope", "read,write,admin")
	bKeyID, bKey := createKey(t, w, "--name", "b", "--user", "user-b", "--scope", "read,write,admin")
	opKeyID, opKey := createKey(t, w, "--name", "op", "--user", "operator", "--scope", "read,write,admin")
	// The server's own agent id names the operator: an API key's user
	// must win over it, and over the client's name.
	url, stderr := startHTTP(t, w, []string{"CAIRN_PROJECT=web", "CAIRN_AGENT_ID=operator"}, "")
	if !strings.Contains(stderr.String(), "api_keys_required=true") {
		t.Fatalf("server does not require API keys:\n%s", stderr.String())
	}
	a := newHTTPAgent(t, url, aKey)
	b := newHTTPAgent(t, url, bKey)

	// 1. user-a creates a workspace: its own, allowed.
	got := a.call("admin_workspace_create", map[string]any{"name": "a's team"})
	expect(t, "user-a creates a workspace", got, "")
	if !got.ok {
		t.FailNow()
	}
	ws := got.result["id"].(string)
	expect(t, "user-a creates a workspace owned by user-b", a.call("admin_workspace_create", map[string]any{"name": "b's", "owner_id": "user-b"}), "self")

	// 2. The first step that borrows an identity: adding user-b without
	// their consent. Refused, whatever the role.
	expect(t, "user-a adds user-b as a member", a.call("admin_member_add", map[string]any{"workspace_id": ws, "user_id": "user-b", "role": "member"}), "operator")
	expect(t, "user-a adds user-b as an owner", a.call("admin_member_add", map[string]any{"workspace_id": ws, "user_id": "user-b", "role": "owner"}), "operator")
	expect(t, "user-a adds the operator", a.call("admin_member_add", map[string]any{"workspace_id": ws, "user_id": "operator", "role": "admin"}), "operator")
	if got := a.call("admin_member_get", map[string]any{"workspace_id": ws, "user_id": "user-b"}); got.ok || got.code != "ERR_NOT_FOUND" {
		t.Errorf("user-b is a member after the refusals: %v %v", got, got.result)
	}
	// With consent: user-a invites, user-a cannot accept for user-b,
	// user-b accepts with their own key.
	inv := a.call("admin_invitation_create", map[string]any{"workspace_id": ws, "email": "b@example.com", "role": "member"})
	expect(t, "user-a invites user-b", inv, "")
	if !inv.ok {
		t.FailNow()
	}
	expect(t, "user-a accepts the invitation as user-b", a.call("admin_invitation_accept", map[string]any{"token": inv.result["token"], "user_id": "user-b"}), "self")
	acc := b.call("admin_invitation_accept", map[string]any{"token": inv.result["token"]})
	expect(t, "user-b accepts the invitation", acc, "")
	if m, _ := acc.result["member"].(map[string]any); m["user_id"] != "user-b" {
		t.Errorf("accepted as %v, want user-b: %v", m["user_id"], acc.result)
	}

	// 3. user-a, owner of a workspace user-b is in, mints a workspace key
	// for user-b: refused. The operator makes one, as the fixture of the
	// next steps.
	expect(t, "user-a mints a workspace key for user-b", a.call("admin_key_create", map[string]any{"name": "b in ws", "user_id": "user-b", "workspace_id": ws, "scopes": []string{"read", "write", "admin"}}), "self")
	bWS := cliJSON(t, w, "keys", "create", "--name", "b in ws", "--user", "user-b", "--workspace", ws, "--scope", "read,write,admin")
	bWSID := bWS["id"].(string)

	// 4. user-a revokes, rotates, changes or reads user-b's keys: refused,
	// the workspace-scoped one included.
	for _, id := range []string{bKeyID, bWSID} {
		expect(t, "user-a revokes user-b's key "+id, a.call("admin_key_revoke", map[string]any{"key_id": id}), "self")
		expect(t, "user-a rotates user-b's key "+id, a.call("admin_key_rotate", map[string]any{"key_id": id}), "self")
		expect(t, "user-a changes user-b's key "+id, a.call("admin_key_update", map[string]any{"key_id": id, "status": "revoked"}), "self")
		expect(t, "user-a reads user-b's key "+id, a.call("admin_key_get", map[string]any{"key_id": id}), "self")
	}
	if got := a.call("admin_key_list", map[string]any{"workspace_id": ws}); !got.ok || got.result["count"] != float64(0) {
		t.Errorf("user-a lists the keys of its workspace: %v %v, want none of user-b's", got, got.result)
	}
	for _, id := range []string{bKeyID, bWSID} {
		k := cliJSON(t, w, "keys", "get", id)
		if k["status"] != "active" || k["revoked_by"] != nil {
			t.Errorf("user-b's key %s after user-a's attempts: status %v revoked_by %v", id, k["status"], k["revoked_by"])
		}
	}
	expect(t, "user-b's own key still works", b.call("task_list", map[string]any{"project": "web"}), "")

	// 5. user-a mints an unscoped admin key in user-b's name: refused.
	expect(t, "user-a mints an unscoped admin key for user-b", a.call("admin_key_create", map[string]any{"name": "b admin", "user_id": "user-b", "scopes": []string{"read", "write", "admin"}}), "self")

	// 6. Tasks, thoughts and audit sessions user-a writes are user-a's,
	// whatever the server's agent id (operator) or the client's name.
	task := a.call("task_create", map[string]any{"title": "written by a", "project": "web"})
	expect(t, "user-a creates a task", task, "")
	if task.result["created_by"] != "user-a" {
		t.Errorf("task created_by %v, want user-a", task.result["created_by"])
	}
	tid := task.result["task_id"]
	th := a.call("thought_record", map[string]any{"task_id": tid, "type": "decision", "content": "mine"})
	expect(t, "user-a records a thought", th, "")
	if th.result["recorded_by"] != "user-a" {
		t.Errorf("thought recorded_by %v, want user-a", th.result["recorded_by"])
	}
	up := a.call("task_update", map[string]any{"task_id": tid, "status": "todo"})
	if up.result["updated_by"] != "user-a" {
		t.Errorf("task updated_by %v, want user-a: %v", up.result["updated_by"], up.result)
	}
	expect(t, "user-a audits as user-b", a.call("audit_session_start", map[string]any{"task_id": tid, "auditor_id": "user-b"}), "self")
	expect(t, "user-a audits as the operator", a.call("audit_session_start", map[string]any{"task_id": tid, "auditor_id": "operator"}), "self")
	expect(t, "user-a audits as itself", a.call("audit_session_start", map[string]any{"task_id": tid, "auditor_id": "user-a"}), "")
	trail := a.call("thought_record_list", map[string]any{"task_id": tid})
	for _, r := range trail.result["thoughts"].([]any) {
		if by := r.(map[string]any)["recorded_by"]; by != "user-a" {
			t.Errorf("the trail records a thought by %v, want user-a", by)
		}
	}

	// 7. The operator's identity: no key mints a key for it, not even a key
	// of the operator's own name (made by the operator, the fixture).
	expect(t, "user-a mints a key for the operator", a.call("admin_key_create", map[string]any{"name": "op", "user_id": "operator", "scopes": []string{"read", "write", "admin"}}), "operator")
	expect(t, "user-a mints a key for the CLI's operator:<user>", a.call("admin_key_create", map[string]any{"name": "op", "user_id": "operator:root"}), "operator")
	o := newHTTPAgent(t, url, opKey)
	expect(t, "a key of the operator's name mints another", o.call("admin_key_create", map[string]any{"name": "more", "scopes": []string{"read"}}), "operator")
	expect(t, "a key of the operator's name rotates itself", o.call("admin_key_rotate", map[string]any{"key_id": opKeyID}), "operator")
	expect(t, "user-a revokes the operator's key", a.call("admin_key_revoke", map[string]any{"key_id": opKeyID}), "self")
	if k := cliJSON(t, w, "keys", "get", opKeyID); k["status"] != "active" {
		t.Errorf("the operator's key after the attempts: %v", k["status"])
	}
}
