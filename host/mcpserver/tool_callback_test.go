package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// callbackServer is a server whose pipeline (with the catalog's filter)
// ends in dispatch instead of plugins: core owns task_get, task_create
// and an internal tool, sdd owns sdd_plan.
func callbackServer(t *testing.T, dispatch pipeline.Handler) *Server {
	t.Helper()
	reg := registry.New()
	obj := json.RawMessage(`{"type":"object"}`)
	if err := reg.Set("core", []*registry.Tool{
		{Name: "task_get", Toolset: "core", InputSchema: obj, OutputSchema: obj, ReadOnly: true},
		{Name: "task_create", Toolset: "core", InputSchema: obj, OutputSchema: obj, HonoursIdempotency: true},
		{Name: "core_secret", Toolset: sdk.InternalToolset, InputSchema: obj, OutputSchema: obj},
	}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Set("sdd", []*registry.Tool{{Name: "sdd_plan", Toolset: "sdd", InputSchema: obj, OutputSchema: obj, CallsTools: true}}); err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(reg, &clientsession.Settings{Mode: config.ModeFull, Toolsets: config.Toolsets{All: true}})
	return &Server{catalog: cat, pipe: pipeline.New(dispatch, pipeline.Filter(cat.Refuse))}
}

// seenCall is what the fake dispatch saw of an inner call.
type seenCall struct {
	call  pipeline.Call
	depth int
}

// TestCallAreaToolRules: an inner call runs through the pipeline as the
// running call's caller, in its session's mode, under a key filed beneath
// the running call's own; the host refuses an unknown channel, another
// plugin's channel, an internal tool, the plugin's own tool, an unknown
// tool and calls nested deeper than two.
func TestCallAreaToolRules(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []seenCall
	srv := callbackServer(t, func(ctx context.Context, c *pipeline.Call) *seam.Result {
		depth, _ := ctx.Value(callbackDepthKey{}).(int)
		mu.Lock()
		seen = append(seen, seenCall{*c, depth})
		mu.Unlock()
		return &seam.Result{Output: json.RawMessage(`{"task_id":"T-1"}`), Status: 200}
	})
	full := clientsession.With(context.Background(), &clientsession.Settings{Mode: config.ModeFull, Toolsets: config.Toolsets{All: true}})
	caller := seam.Caller{ID: "agent-7", Source: "env", Project: "apollo", Scopes: []string{"write"}}
	outer := &pipeline.Call{Name: "sdd_plan", Caller: caller, IdempotencyKey: "sess:3", IdempotencyClient: true, RequestID: "3"}
	ch, closeCh := srv.callbacks.open(full, "sdd", outer)
	defer closeCh()

	out := srv.callAreaTool(context.Background(), "sdd", seam.ToolCallback{Channel: ch, Tool: "task_create", Args: json.RawMessage(`{"title":"x"}`), IdempotencyKey: "/task/1"})
	if out.Err != nil || string(out.Output) != `{"task_id":"T-1"}` {
		t.Fatalf("inner call: %+v %s", out.Err, out.Output)
	}
	mu.Lock()
	got := seen[len(seen)-1]
	mu.Unlock()
	if got.call.Name != "task_create" || got.call.Caller.ID != "agent-7" || got.call.Caller.Project != "apollo" || len(got.call.Caller.Scopes) != 1 ||
		got.call.IdempotencyKey != "sess:3/task/1" || !got.call.IdempotencyClient || got.depth != 1 {
		t.Fatalf("the inner call ran as %+v at depth %d; want the running call's caller, key sess:3/task/1, depth 1", got.call, got.depth)
	}

	// A running call without a key gives its inner calls none: the key
	// a plugin sends is never filed on its own.
	unkeyed, closeUnkeyed := srv.callbacks.open(full, "sdd", &pipeline.Call{Name: "sdd_plan", Caller: caller})
	defer closeUnkeyed()
	if out := srv.callAreaTool(context.Background(), "sdd", seam.ToolCallback{Channel: unkeyed, Tool: "task_get", IdempotencyKey: "sess:3/task/1"}); out.Err != nil {
		t.Fatal(out.Err)
	}
	mu.Lock()
	if k := seen[len(seen)-1].call.IdempotencyKey; k != "" {
		t.Fatalf("an inner call of an unkeyed call carried the key %q", k)
	}
	mu.Unlock()

	for _, tc := range []struct {
		name, plugin, tool string
		channel            uint64
		status             int
		code, field        string
	}{
		{"no running call", "sdd", "task_get", ch + 100, 409, errs.Conflict, "tool_channel"},
		{"another plugin's call", "vision", "task_get", ch, 409, errs.Conflict, "tool_channel"},
		{"unknown tool", "sdd", "task_nope", ch, 404, errs.NotFound, "tool"},
		{"internal tool", "sdd", "core_secret", ch, 403, errs.Forbidden, "tool"},
		{"own tool", "sdd", "sdd_plan", ch, 400, errs.InvalidInput, "tool"},
	} {
		out := srv.callAreaTool(context.Background(), tc.plugin, seam.ToolCallback{Channel: tc.channel, Tool: tc.tool})
		if out.Err == nil || out.Status != tc.status || out.Err.Code != tc.code || out.Err.Details["field"] != tc.field {
			t.Errorf("%s: %+v (status %d), want %d %s naming %s", tc.name, out.Err, out.Status, tc.status, tc.code, tc.field)
		}
	}

	// Depth: a call running two deep may not call further.
	deep := context.WithValue(full, callbackDepthKey{}, 2)
	dch, closeDeep := srv.callbacks.open(deep, "core", &pipeline.Call{Name: "task_create", Caller: caller})
	defer closeDeep()
	if out := srv.callAreaTool(context.Background(), "core", seam.ToolCallback{Channel: dch, Tool: "sdd_plan"}); out.Err == nil || out.Status != 409 || out.Err.Code != errs.LimitExceeded {
		t.Fatalf("a call three deep: %+v, want 409 ERR_LIMIT_EXCEEDED", out.Err)
	}
	once := context.WithValue(full, callbackDepthKey{}, 1)
	och, closeOnce := srv.callbacks.open(once, "core", &pipeline.Call{Name: "task_create", Caller: caller})
	defer closeOnce()
	if out := srv.callAreaTool(context.Background(), "core", seam.ToolCallback{Channel: och, Tool: "sdd_plan"}); out.Err != nil {
		t.Fatalf("a call two deep was refused: %+v", out.Err)
	}
}

// TestCallAreaToolKeepsTheSessionsRights: a READONLY session's running
// call cannot write through another area's tool; it may read.
func TestCallAreaToolKeepsTheSessionsRights(t *testing.T) {
	t.Parallel()
	srv := callbackServer(t, func(context.Context, *pipeline.Call) *seam.Result {
		return &seam.Result{Output: json.RawMessage(`{}`), Status: 200}
	})
	ro := clientsession.With(context.Background(), &clientsession.Settings{Mode: config.ModeReadOnly, Toolsets: config.Toolsets{All: true}})
	ch, closeCh := srv.callbacks.open(ro, "sdd", &pipeline.Call{Name: "sdd_plan", Caller: seam.Caller{ID: "reader"}})
	defer closeCh()
	if out := srv.callAreaTool(context.Background(), "sdd", seam.ToolCallback{Channel: ch, Tool: "task_create"}); out.Err == nil || out.Status != 403 {
		t.Fatalf("a READONLY session's inner write: %+v, want a 403 refusal", out.Err)
	}
	if out := srv.callAreaTool(context.Background(), "sdd", seam.ToolCallback{Channel: ch, Tool: "task_get"}); out.Err != nil {
		t.Fatalf("a READONLY session's inner read: %+v", out.Err)
	}
}

// TestCallAreaToolEndsWithTheRunningCall: cancelling the running call
// cancels the inner one, which reports the cancellation.
func TestCallAreaToolEndsWithTheRunningCall(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := callbackServer(t, func(ctx context.Context, _ *pipeline.Call) *seam.Result {
		close(started)
		<-ctx.Done()
		return pipeline.Fail(errs.New(499, errs.Cancelled, "cancelled"))
	})
	ctx, cancel := context.WithCancel(clientsession.With(context.Background(), &clientsession.Settings{Mode: config.ModeFull, Toolsets: config.Toolsets{All: true}}))
	ch, closeCh := srv.callbacks.open(ctx, "sdd", &pipeline.Call{Name: "sdd_plan"})
	defer closeCh()
	done := make(chan *seam.Result, 1)
	go func() {
		done <- srv.callAreaTool(context.Background(), "sdd", seam.ToolCallback{Channel: ch, Tool: "task_get"})
	}()
	<-started
	cancel()
	select {
	case out := <-done:
		if out.Err == nil || out.Err.Code != errs.Cancelled {
			t.Fatalf("inner call after the running call ended: %+v", out.Err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the inner call outlived the running call")
	}
}

// BenchmarkToolChannel is what a call of a tool that declares CallsTools
// pays for its channel: opening and closing it. Calls of other tools pay
// one flag check (docs/decisions.md D46).
func BenchmarkToolChannel(b *testing.B) {
	var cb toolCallbacks
	ctx := context.Background()
	c := &pipeline.Call{Name: "sdd_plan"}
	b.ReportAllocs()
	for b.Loop() {
		_, done := cb.open(ctx, "sdd", c)
		done()
	}
}
