package hostconn_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/hostconn"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// areaHost is a Host that runs task_get for a plugin's CallAreaTool, as
// the core area would, and records what the plugin asked.
type areaHost struct {
	quietHost
	mu    sync.Mutex
	calls []seam.ToolCallback
}

func (h *areaHost) CallAreaTool(_ context.Context, cb seam.ToolCallback) seam.Result {
	h.mu.Lock()
	h.calls = append(h.calls, cb)
	h.mu.Unlock()
	var in struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(cb.Args, &in)
	if cb.Tool != "task_get" || in.TaskID != "T-1" {
		e := errs.NotFoundf(errs.TaskNotFound, "task_id", "no task %q", in.TaskID)
		return seam.Result{Err: e, Status: e.Status}
	}
	return seam.Result{Output: json.RawMessage(`{"task_id":"T-1","title":"Write docs"}`), Status: 200}
}

func (h *areaHost) seen() []seam.ToolCallback {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]seam.ToolCallback(nil), h.calls...)
}

// TestCallAreaToolOverThePluginTransport: a handler's sdk.CallTool
// reaches the host's CallAreaTool over the real protocol, on both call
// transports (gRPC and the call lane), with the call's tool channel, the
// tool, its arguments and the inner key less the outer key's prefix; the
// host's output decodes into the handler's value, and a typed refusal
// comes back as the tool's own error. A call without a channel is a 409.
func TestCallAreaToolOverThePluginTransport(t *testing.T) {
	t.Parallel()
	h := &areaHost{}
	p, err := startNotes(h)
	if err != nil {
		t.Fatal(err)
	}
	defer p.end()
	l, err := hostconn.DialLane(t.Context(), p.conf.CallLane)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	transports := map[string]func(context.Context, seam.Call) (*seam.Result, error){
		"grpc": func(ctx context.Context, c seam.Call) (*seam.Result, error) { return p.conn.Call(ctx, c, nil, nil) },
		"lane": func(ctx context.Context, c seam.Call) (*seam.Result, error) { return l.Call(ctx, c, nil, nil) },
	}
	for name, call := range transports {
		t.Run(name, func(t *testing.T) {
			before := len(h.seen())
			res, err := call(t.Context(), seam.Call{Tool: "note_link", Args: json.RawMessage(`{"text":"T-1"}`), ToolChannel: 7, IdempotencyKey: "sess:9"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil || string(res.Output) != `{"task":"T-1","title":"Write docs"}` {
				t.Fatalf("result %+v %s, want the task's title", res.Err, res.Output)
			}
			seen := h.seen()
			if len(seen) != before+1 {
				t.Fatalf("the host saw %d callbacks, want %d", len(seen), before+1)
			}
			cb := seen[len(seen)-1]
			if cb.Channel != 7 || cb.Tool != "task_get" || string(cb.Args) != `{"task_id":"T-1"}` || cb.IdempotencyKey != "/link" {
				t.Fatalf("callback %+v (args %s), want channel 7, task_get, T-1, key /link", cb, cb.Args)
			}

			res, err = call(t.Context(), seam.Call{Tool: "note_link", Args: json.RawMessage(`{"text":"T-9"}`), ToolChannel: 8})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err == nil || res.Err.Code != errs.TaskNotFound || res.Status != 404 || res.Err.Details["field"] != "task_id" {
				t.Fatalf("result %+v, want the inner 404 ERR_TASK_NOT_FOUND naming task_id", res.Err)
			}

			res, err = call(t.Context(), seam.Call{Tool: "note_link", Args: json.RawMessage(`{"text":"T-1"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err == nil || res.Status != 409 || res.Err.Code != errs.Conflict {
				t.Fatalf("result %+v, want 409 without a tool channel", res.Err)
			}
		})
	}
}
