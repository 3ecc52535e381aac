package core

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// startCore configures a real core plugin over a temporary data dir.
func startCore(t *testing.T) *sdk.Plugin {
	t.Helper()
	t.Setenv("CAIRN_LOG_LEVEL", "error")
	t.Setenv("CAIRN_PROJECT", "")
	p := New()
	dir := t.TempDir()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: dir, DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	return p
}

func invoke(t *testing.T, p *sdk.Plugin, ctx context.Context, tool, args string) (map[string]any, sdk.Result) {
	t.Helper()
	res := sdktest.Invoke(ctx, p, tool, []byte(args))
	var out map[string]any
	if res.Err == nil {
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out, res
}

func session(id, project string) context.Context {
	return sdk.WithCaller(context.Background(), sdk.Caller{ID: id, Source: "env", Project: project})
}

// D30: task_create answers 200. D21/D24: a session's project is the default
// of task_next_actions and counts as registered; without one, the project
// the caller used last; without either, 404.
func TestSessionProjectAndStatus(t *testing.T) {
	p := startCore(t)
	a := session("ann", "repo-a")
	out, res := invoke(t, p, a, "task_next_actions", `{}`)
	if res.Err != nil || out["project"] != "repo-a" || out["count"] != 0.0 {
		t.Fatalf("session default: %v %+v", out, res.Err)
	}
	out, res = invoke(t, p, a, "task_create", `{"title":"x","project":"repo-a"}`)
	if res.Err != nil || res.Status != 200 || out["task_id"] != "T-1" {
		t.Fatalf("create in the session project: %v %d %+v", out, res.Status, res.Err)
	}
	// Another session on the same plugin has its own default.
	b := session("bob", "repo-b")
	if out, _ := invoke(t, p, b, "task_next_actions", `{}`); out["project"] != "repo-b" {
		t.Fatalf("second session answered for %v", out["project"])
	}
	// No session project: the project used last, else 404.
	c := session("cy", "")
	if _, res := invoke(t, p, c, "task_next_actions", `{}`); res.Err == nil || res.Err.Code != "ERR_PROJECT_NOT_FOUND" {
		t.Fatalf("no context: %+v", res.Err)
	}
	if _, res := invoke(t, p, c, "task_list", `{"project":"repo-a"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	if out, _ := invoke(t, p, c, "task_next_actions", `{}`); out["project"] != "repo-a" {
		t.Fatalf("project used last: %v", out["project"])
	}
}

// The admin area's project events: archived refuses new tasks with 409
// naming the state, unarchived accepts them again, deleted is unknown.
func TestProjectLifecycleEvents(t *testing.T) {
	p := startCore(t)
	ctx := session("ann", "")
	deliver := func(typ string) {
		if err := sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: typ, Data: json.RawMessage(`{"slug":"shop"}`)}); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	deliver(ProjectCreatedEvent)
	if _, res := invoke(t, p, ctx, "task_create", `{"title":"x","project":"shop"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	deliver(ProjectArchivedEvent)
	_, res := invoke(t, p, ctx, "task_create", `{"title":"y","project":"shop"}`)
	if res.Err == nil || res.Status != 409 || res.Err.Code != "ERR_CONFLICT" || res.Err.Details["state"] != "archived" {
		t.Fatalf("archived: %d %+v", res.Status, res.Err)
	}
	if out, res := invoke(t, p, ctx, "task_list", `{"project":"shop"}`); res.Err != nil || out["total_count"] != 1.0 {
		t.Fatalf("archived reads: %v %+v", out, res.Err)
	}
	deliver(ProjectUnarchivedEvent)
	if _, res := invoke(t, p, ctx, "task_create", `{"title":"z","project":"shop"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	deliver(ProjectDeletedEvent)
	_, res = invoke(t, p, ctx, "task_create", `{"title":"w","project":"shop"}`)
	if res.Err == nil || res.Status != 404 || res.Err.Code != "ERR_PROJECT_NOT_FOUND" {
		t.Fatalf("deleted: %d %+v", res.Status, res.Err)
	}
	if err := sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: ProjectArchivedEvent, Data: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("an event without a slug was accepted")
	}
}

// Idempotency through the SDK: the write tools declare it, and a repeated
// key returns the first output without writing again.
func TestIdempotencyThroughTools(t *testing.T) {
	p := startCore(t)
	honours := map[string]bool{}
	for _, tl := range sdktest.Tools(p) {
		honours[tl.Name] = tl.HonoursIdempotency
	}
	for _, name := range []string{"task_create", "task_update", "task_next_actions"} {
		if !honours[name] {
			t.Errorf("%s does not declare HonoursIdempotency", name)
		}
	}
	ctx := sdk.WithIdempotency(session("ann", "repo"), sdk.Idempotency{Key: "relay-1:7", Replay: true})
	first, res := invoke(t, p, ctx, "task_create", `{"title":"once","project":"repo"}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	again, res := invoke(t, p, ctx, "task_create", `{"title":"once","project":"repo"}`)
	if res.Err != nil || again["task_id"] != first["task_id"] || again["created_at"] != first["created_at"] {
		t.Fatalf("replay %v, first %v", again, first)
	}
	if out, _ := invoke(t, p, ctx, "task_list", `{}`); out["total_count"] != 1.0 {
		t.Fatalf("replay wrote: %v", out)
	}
}

// claim: true needs the write scope (an API key with only read cannot take
// work); the local operator holds every scope.
func TestClaimNeedsWriteScope(t *testing.T) {
	p := startCore(t)
	reader := sdk.WithCaller(context.Background(), sdk.Caller{ID: "r", Source: "api_key", Scopes: []string{"read"}, Project: "repo"})
	_, res := invoke(t, p, reader, "task_next_actions", `{"claim":true}`)
	if res.Err == nil || res.Status != 403 || res.Err.Code != "ERR_FORBIDDEN" || res.Err.Details["required"] != "write" {
		t.Fatalf("read-only claim: %d %+v", res.Status, res.Err)
	}
	if _, res := invoke(t, p, reader, "task_next_actions", `{}`); res.Err != nil {
		t.Fatalf("read without claim: %+v", res.Err)
	}
}

// Reads stay reads: task_list and task_next_actions by a caller whose last
// project is already remembered commit nothing (the store file's
// modification time does not move), while the first use records it.
func TestReadsDoNotWrite(t *testing.T) {
	p := startCore(t)
	ctx := session("ann", "")
	if _, res := invoke(t, p, ctx, "task_create", `{"title":"x","project":"repo"}`); res.Err == nil {
		t.Fatal("unknown project accepted")
	}
	if err := sdktest.DeliverEvent(context.Background(), p, sdk.Event{Type: ProjectCreatedEvent, Data: json.RawMessage(`{"slug":"repo"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, res := invoke(t, p, ctx, "task_list", `{"project":"repo"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	path := filepath.Join(p.Config().DataDir, StoreFile)
	stat := func() time.Time {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	before := stat()
	for i := 0; i < 20; i++ {
		for _, c := range []struct{ tool, args string }{
			{"task_list", `{"project":"repo"}`},
			{"task_next_actions", `{"project":"repo"}`},
			{"task_next_actions", `{}`},
		} {
			if _, res := invoke(t, p, ctx, c.tool, c.args); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	}
	if after := stat(); !after.Equal(before) {
		t.Fatalf("reads wrote to the store: mtime %v → %v", before, after)
	}
}
