package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/admin/webhooks"
)

// The admin area end to end: its toolset over stdio, workspace projects
// reaching the task pipeline, bus events reaching a signed webhook, and the
// `cairn admin` CLI with and without a running server.

// hookReceiver is a loopback webhook endpoint that verifies signatures.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	events []map[string]any
	bad    int
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		h.mu.Lock()
		defer h.mu.Unlock()
		if !webhooks.Verify(body, r.Header.Get("X-Cairn-Signature-256"), h.secret) ||
			!webhooks.VerifyStandard(r.Header.Get("webhook-id"), ts, body, r.Header.Get("webhook-signature"), h.secret) {
			h.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		h.events = append(h.events, ev)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) got(eventType string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events {
		if e["type"] == eventType {
			return e
		}
	}
	return nil
}

func okCall(t *testing.T, s *session, tool string, args map[string]any) map[string]any {
	t.Helper()
	res := s.call(tool, args)
	if res.IsError {
		t.Fatalf("%s %v: %v", tool, args, structured(t, res))
	}
	return structured(t, res)
}

func TestAdminToolsetOverStdio(t *testing.T) {
	w := newWorkspace(t)
	recv := newHookReceiver(t)
	s := w.serve("CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_ENV=development", "CAIRN_AGENT_ID=ops-agent")
	tools := s.tools()
	for _, name := range []string{"admin_key_create", "admin_workspace_create", "admin_project_create", "admin_webhook_register", "admin_webhook_test", "admin_event_trigger"} {
		if _, ok := tools[name]; !ok {
			t.Fatalf("%s not listed", name)
		}
	}
	if ro := tools["admin_key_list"].Annotations.ReadOnlyHint; ro == nil || !*ro {
		t.Error("admin_key_list should be read-only")
	}

	key := okCall(t, s, "admin_key_create", map[string]any{"name": "ci"})
	validateAgainst(t, w, tools["admin_key_create"], key)
	plain, _ := key["plaintext_key"].(string)
	if !strings.HasPrefix(plain, "cairn_") || key["key_hash"] != nil {
		t.Fatalf("key_create = %v", key)
	}
	listed := okCall(t, s, "admin_key_list", map[string]any{})
	raw, _ := json.Marshal(listed)
	if strings.Contains(string(raw), plain) || strings.Contains(string(raw), "key_hash") {
		t.Fatalf("key_list leaks: %s", raw)
	}
	rot := okCall(t, s, "admin_key_rotate", map[string]any{"key_id": key["id"]})
	if v := okCall(t, s, "admin_key_validate", map[string]any{"key": plain}); v["valid"] != false || v["reason"] != "revoked" {
		t.Fatalf("old key after rotate: %v", v)
	}
	newPlain := rot["new_key"].(map[string]any)["plaintext_key"].(string)
	if v := okCall(t, s, "admin_key_validate", map[string]any{"key": newPlain}); v["valid"] != true {
		t.Fatalf("new key: %v", v)
	}

	// Webhook on loopback (development mode), subscribed to task events.
	reg := okCall(t, s, "admin_webhook_register", map[string]any{"url": recv.srv.URL + "/hook", "event_types": []string{"task.*"}})
	hook := reg["webhook"].(map[string]any)
	recv.mu.Lock()
	recv.secret = hook["secret"].(string)
	recv.mu.Unlock()
	if tr := okCall(t, s, "admin_webhook_test", map[string]any{"webhook_id": hook["id"]}); tr["success"] != true {
		t.Fatalf("webhook test: %v", tr)
	}

	// A workspace project becomes a task project.
	ws := okCall(t, s, "admin_workspace_create", map[string]any{"name": "Platform"})
	if ws["owner_id"] != "ops-agent" {
		t.Fatalf("owner %v", ws["owner_id"])
	}
	prj := okCall(t, s, "admin_project_create", map[string]any{"workspace_id": ws["id"], "name": "Billing API"})
	if prj["slug"] != "billing-api" {
		t.Fatalf("project %v", prj)
	}
	var taskID string
	eventually(t, patience, "task_create to accept the workspace project", func() bool {
		res := s.call("task_create", map[string]any{"title": "Invoice export", "project": "billing-api"})
		if res.IsError {
			return false
		}
		taskID = structured(t, res)["task_id"].(string)
		return true
	})
	eventually(t, patience, "task.created at the webhook receiver", func() bool {
		ev := recv.got("task.created")
		return ev != nil && strings.Contains(mustJSON(ev["data"]), taskID)
	})
	recv.mu.Lock()
	bad := recv.bad
	recv.mu.Unlock()
	if bad != 0 {
		t.Fatalf("%d deliveries failed signature checks", bad)
	}
	hist := okCall(t, s, "admin_webhook_deliveries", map[string]any{"webhook_id": hook["id"]})
	if hist["count"].(float64) < 2 {
		t.Fatalf("history %v", hist)
	}
	// Validation errors are typed and name the field.
	res := s.call("admin_webhook_register", map[string]any{"url": "ftp://example.com/x"})
	if !res.IsError || metaStatus(res) != 400 {
		t.Fatalf("ftp url: %v", structured(t, res))
	}
	if e := structured(t, res)["error"].(map[string]any); e["details"].(map[string]any)["field"] != "url" {
		t.Fatalf("error %v", e)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAdminToolsetOffByDefault(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve()
	for name := range s.tools() {
		if strings.HasPrefix(name, "admin_") {
			t.Fatalf("%s listed without the admin toolset", name)
		}
	}
}

func TestAdminCLIWithAndWithoutServer(t *testing.T) {
	w := newWorkspace(t)
	cli := func(args ...string) map[string]any {
		t.Helper()
		code, out, errOut := runCairn(t, w, "", nil, append([]string{"admin"}, append(args, "--json")...)...)
		if code != 0 {
			t.Fatalf("cairn admin %v: exit %d\n%s", args, code, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("cairn admin %v: %v\n%s", args, err, out)
		}
		return m
	}
	// No server running.
	key := cli("keys", "create", "--name", "offline")
	ws := cli("workspaces", "create", "--name", "Ops", "--owner", "alice")
	cli("projects", "create", ws["id"].(string), "--name", "Offline Project")
	code, out, _ := runCairn(t, w, "", nil, "admin", "keys", "list")
	if code != 0 || !strings.Contains(out, key["id"].(string)) || !strings.Contains(out, "PREVIEW") || strings.Contains(out, key["plaintext_key"].(string)) {
		t.Fatalf("keys list table: %d\n%s", code, out)
	}

	// With a server running (holding the core store), the CLI still works
	// and the server sees its changes.
	s := w.serve("CAIRN_TOOLSETS=all")
	if res := s.call("task_create", map[string]any{"title": "t", "project": "offline-project"}); res.IsError {
		t.Fatalf("project created offline not registered: %v", structured(t, res))
	}
	v := okCall(t, s, "admin_key_validate", map[string]any{"key": key["plaintext_key"]})
	if v["valid"] != true {
		t.Fatalf("server does not see the CLI's key: %v", v)
	}
	cli("keys", "revoke", key["id"].(string))
	if v := okCall(t, s, "admin_key_validate", map[string]any{"key": key["plaintext_key"]}); v["valid"] != false || v["reason"] != "revoked" {
		t.Fatalf("revocation by CLI not seen at once: %v", v)
	}
	inv := cli("invitations", "create", ws["id"].(string), "--email", "dev@example.com")
	acc := cli("invitations", "accept", inv["token"].(string), "--user", "dev")
	if acc["success"] != true {
		t.Fatalf("accept %v", acc)
	}
	if code, _, errOut := runCairn(t, w, "", nil, "admin", "invitations", "accept", inv["token"].(string)); code == 0 || !strings.Contains(errOut, "already_used") {
		t.Fatalf("second accept: %d %s", code, errOut)
	}
	if code, _, errOut := runCairn(t, w, "", nil, "admin", "members", "remove", ws["id"].(string), "alice"); code == 0 || !strings.Contains(errOut, "last owner") {
		t.Fatalf("last owner removal: %d %s", code, errOut)
	}
	p2 := cli("projects", "create", ws["id"].(string), "--name", "Online Project")
	if p2["slug"] != "online-project" {
		t.Fatalf("%v", p2)
	}
	eventually(t, patience, "the running server to register a project the CLI created", func() bool {
		return !s.call("task_create", map[string]any{"title": "t", "project": "online-project"}).IsError
	})
}
