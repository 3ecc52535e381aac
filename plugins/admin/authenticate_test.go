package admin

import (
	"testing"
)

func TestAuthenticateValidatesAndCounts(t *testing.T) {
	p := configured(t)
	op := operatorCtx()
	k := must(t, p, op, "admin_key_create", map[string]any{"name": "ci", "user_id": "alice", "scopes": []string{"read"},
		"rate_limit": map[string]any{"per_minute": 2, "per_hour": 100, "per_day": 1000}})
	plain := k["plaintext_key"].(string)

	got := must(t, p, op, "admin_key_authenticate", map[string]any{"key": plain})
	if got["user_id"] != "alice" || got["key_id"] != k["id"] || got["status"] != "active" || got["workspace_id"] != nil {
		t.Fatalf("authenticate: %v", got)
	}
	if sc := got["scopes"].([]any); len(sc) != 1 || sc[0] != "read" {
		t.Fatalf("scopes %v", sc)
	}
	rl := got["rate_limit"].(map[string]any)
	if rl["allowed"] != true || rl["remaining"].(map[string]any)["perMinute"] != float64(1) {
		t.Fatalf("rate_limit %v", rl)
	}
	must(t, p, op, "admin_key_authenticate", map[string]any{"key": plain})
	// The third request in the minute is over the limit.
	_, res := call(t, p, op, "admin_key_authenticate", map[string]any{"key": plain})
	if res.Err == nil || res.Status != 429 || res.Err.Code != "ERR_RATE_LIMITED" || res.Err.Details["window"] != "minute" {
		t.Fatalf("over the limit: %d %+v", res.Status, res.Err)
	}
	if ms, ok := res.Err.Details["retry_after_ms"].(int64); !ok || ms < 1 || ms > 60_000 {
		t.Fatalf("retry_after_ms %#v", res.Err.Details["retry_after_ms"])
	}
	// Counted: the usage shows two requests, not three.
	u := must(t, p, op, "admin_key_usage", map[string]any{"key_id": k["id"]})
	if u["total_requests"] != float64(2) {
		t.Fatalf("usage %v", u)
	}

	revoked := must(t, p, op, "admin_key_create", map[string]any{"name": "r", "user_id": "bob"})
	must(t, p, op, "admin_key_revoke", map[string]any{"key_id": revoked["id"]})
	for _, c := range []struct{ key, reason string }{
		{"not-a-key", "malformed"},
		{"cairn_" + "ab00000000000000000000000000000000000000000000000000000000000000", "unknown"},
		{revoked["plaintext_key"].(string), "revoked"},
	} {
		_, res := call(t, p, op, "admin_key_authenticate", map[string]any{"key": c.key})
		if res.Err == nil || res.Status != 401 || res.Err.Code != "ERR_UNAUTHORIZED" || res.Err.Details["reason"] != c.reason {
			t.Errorf("%s: %d %+v", c.reason, res.Status, res.Err)
		}
	}

	// A key in its rotation grace authenticates and says so.
	g := must(t, p, op, "admin_key_create", map[string]any{"name": "g", "user_id": "carol"})
	must(t, p, op, "admin_key_rotate", map[string]any{"key_id": g["id"], "grace_period_ms": 60_000})
	ga := must(t, p, op, "admin_key_authenticate", map[string]any{"key": g["plaintext_key"]})
	if ga["status"] != "rotating" || ga["in_grace_period"] != true || ga["grace_ends_at"] == nil {
		t.Fatalf("rotating key: %v", ga)
	}
	listed := must(t, p, op, "admin_key_list", map[string]any{"status": "rotating"})
	if listed["count"] != float64(1) {
		t.Fatalf("rotating keys listed: %v", listed)
	}
}

func TestAuditLogThroughTheToolsNamesTheCaller(t *testing.T) {
	p := configured(t)
	k := must(t, p, keyCtx("alice", "read", "write"), "admin_key_create", map[string]any{"name": "mine"})
	must(t, p, keyCtx("alice", "read", "write"), "admin_key_update", map[string]any{"key_id": k["id"], "name": "renamed"})
	log := must(t, p, keyCtx("alice", "read", "write"), "admin_key_audit_log", map[string]any{"key_id": k["id"]})
	entries := log["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("entries %v", entries)
	}
	upd := entries[1].(map[string]any)
	if upd["action"] != "updated" || upd["actor"] != "alice" {
		t.Fatalf("update entry %v", upd)
	}
	got := must(t, p, keyCtx("alice", "read", "write"), "admin_key_get", map[string]any{"key_id": k["id"]})
	for _, f := range []string{"workspace_id", "expires_at", "revoked_at", "grace_ends_at"} {
		if v, ok := got[f]; !ok || v != nil {
			t.Errorf("%s = %v (present %v)", f, v, ok)
		}
	}
}
