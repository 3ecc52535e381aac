package admin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

func configured(t *testing.T) *sdk.Plugin {
	t.Helper()
	return configuredAt(t, t.TempDir())
}

func configuredAt(t *testing.T, dir string) *sdk.Plugin {
	t.Helper()
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{DataDir: dir, Mode: "FULL"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	return p
}

func invoke(t *testing.T, p *sdk.Plugin, tool string, args any) (map[string]any, sdk.Result) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "agent-1", Source: "env"})
	res := sdktest.Invoke(ctx, p, tool, raw)
	var out map[string]any
	if res.Err == nil {
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("%s: output %s: %v", tool, res.Output, err)
		}
	}
	return out, res
}

func TestToolsNeverExposeHashesAndShowPlaintextOnce(t *testing.T) {
	p := configured(t)
	for _, ti := range sdktest.Tools(p) {
		internal := (ti.Name == "admin_key_authenticate" || strings.HasPrefix(ti.Name, "admin_store_")) && ti.Toolset == sdk.InternalToolset
		if (ti.Toolset != "admin" && !internal) || !strings.HasPrefix(ti.Name, "admin_") {
			t.Errorf("tool %s in toolset %s", ti.Name, ti.Toolset)
		}
		if strings.Contains(string(ti.OutputSchema), "key_hash") || strings.Contains(string(ti.OutputSchema), "token_hash") {
			t.Errorf("%s output schema mentions a hash", ti.Name)
		}
	}
	created, res := invoke(t, p, "admin_key_create", map[string]any{"name": "ci"})
	if res.Err != nil || res.Status != 201 {
		t.Fatalf("create: %v %d", res.Err, res.Status)
	}
	plain, _ := created["plaintext_key"].(string)
	if !strings.HasPrefix(plain, "cairn_") || len(plain) != 70 || created["user_id"] != "agent-1" {
		t.Fatalf("created = %v", created)
	}
	if _, ok := created["key_hash"]; ok {
		t.Fatal("create returned the hash")
	}
	got, res := invoke(t, p, "admin_key_get", map[string]any{"key_id": created["id"]})
	if res.Err != nil || got["plaintext_key"] != nil || got["key_hash"] != nil {
		t.Fatalf("get leaked: %v %v", got, res.Err)
	}
	v, _ := invoke(t, p, "admin_key_validate", map[string]any{"key": plain})
	if v["valid"] != true {
		t.Fatalf("validate = %v", v)
	}
	_, res = invoke(t, p, "admin_key_get", map[string]any{"key_id": "key_nope"})
	if res.Err == nil || res.Status != 404 {
		t.Fatalf("unknown key: %v", res)
	}
	_, res = invoke(t, p, "admin_workspace_create", map[string]any{"name": strings.Repeat("x", 256)})
	if res.Err == nil || res.Status != 400 || res.Err.Details["field"] != "name" {
		t.Fatalf("long name: %+v", res.Err)
	}
	ws, res := invoke(t, p, "admin_workspace_create", map[string]any{"name": "Team"})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	prj, res := invoke(t, p, "admin_project_create", map[string]any{"workspace_id": ws["id"], "name": "Web App"})
	if res.Err != nil || prj["slug"] != "web-app" {
		t.Fatalf("project: %v %v", prj, res.Err)
	}
	et, _ := invoke(t, p, "admin_event_types", map[string]any{})
	if len(et["event_types"].([]any)) < 16 {
		t.Fatalf("event types: %v", et)
	}
}

// The area takes the bus's webhook events and the host's ready signal, and
// not the host's own notifications, several of which follow every write.
func TestAdminSubscribesToWebhookEventsOnly(t *testing.T) {
	subs := sdktest.Subscriptions(New())
	takes := func(eventType string) bool {
		for _, p := range subs {
			if seam.MatchEventType(p, eventType) {
				return true
			}
		}
		return false
	}
	for _, ev := range []string{sdk.EventHostReady, "task.created", "task.updated", "thought.recorded", "audit.finalized",
		"sdd.lease.issued", "project.created", "vision.analysis.completed", "api_key.created", "workspace.deleted", "webhook.test"} {
		if !takes(ev) {
			t.Errorf("%s is not delivered to the admin area (subscriptions %v)", ev, subs)
		}
	}
	for _, ev := range []string{sdk.EventResourceUpdated, sdk.EventPromptsChanged} {
		if takes(ev) {
			t.Errorf("%s is delivered to the admin area, which no webhook takes", ev)
		}
	}
}
