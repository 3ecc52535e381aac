package supervisor

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// TestEveryCallKindOnBothTransports: the host keeps two call transports, the
// lane and the CallTool stream (docs/decisions.md D34), so every kind of
// call a host makes to a plugin answers the same on both: a tool call (its
// result, typed error, progress and log lines), event delivery one by one
// and in a batch, prompts, completions, resources, task operations and
// health. Tool calls and events take the transport under test; the others
// are gRPC calls on either, checked here so that neither setting breaks
// them.
func TestEveryCallKindOnBothTransports(t *testing.T) {
	for _, transport := range []string{"lane", "stream"} {
		t.Run(transport, func(t *testing.T) {
			if transport == "stream" {
				t.Setenv("CAIRN_CALL_LANE", "off")
			}
			env := testEnv(t, Backoff{})
			p := startTestkit(t, Spec{Env: []string{"TESTKIT_PROMPTS=1"}}, env, Hooks{})
			onLane := transport == "lane"
			if laneOf(p) != onLane {
				t.Fatalf("lane in use = %v on the %s transport", laneOf(p), transport)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			// Tool call: result, typed error, progress and log lines.
			if out, err := call(p, "testkit_echo", map[string]any{"message": "hi"}); err != nil || out["message"] != "hi" {
				t.Fatalf("tool call: %v, %v", out, err)
			}
			_, err := call(p, "testkit_fail", map[string]any{"code": "ERR_CONFLICT", "status": 409})
			typed(t, err, 409, "ERR_CONFLICT")
			var progress, logs int
			res := p.Call(ctx, &pipeline.Call{Name: "testkit_sleep", Args: []byte(`{"ms":20,"log":true}`), LogLevel: "info",
				Progress: func(float64, float64, string) { progress++ },
				Log:      func(string, string, json.RawMessage) { logs++ }}, CallOptions{})
			if res.Err != nil || progress == 0 || logs == 0 {
				t.Fatalf("a call with progress and logs: %+v, %d progress, %d log lines", res, progress, logs)
			}

			// Events, one by one and in a batch.
			if err := p.deliver(events.Event{ID: "e1", Type: "demo.one", Source: "other"}); err != nil {
				t.Fatalf("deliver: %v", err)
			}
			batch := []events.Event{{ID: "e2", Type: "demo.two", Source: "other"}, {ID: "e3", Type: "demo.three", Source: "other"}}
			for i, err := range p.deliverBatch(batch) {
				if err != nil {
					t.Fatalf("batch event %d: %v", i, err)
				}
			}
			out, err := call(p, "testkit_events", map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range out["events"].([]any) {
				got = append(got, e.(map[string]any)["type"].(string))
			}
			if !slices.Equal(got, []string{"demo.one", "demo.two", "demo.three"}) {
				t.Fatalf("the plugin handled %q, want demo.one, demo.two, demo.three in order", got)
			}

			// Prompts and completions.
			prompts, err := p.ListPrompts(ctx)
			if err != nil || len(prompts) != 1 || prompts[0].Name != "testkit_greet" {
				t.Fatalf("prompts: %+v, %v", prompts, err)
			}
			rendered, err := p.GetPrompt(ctx, "testkit_greet", map[string]string{"who": "ada"})
			if err != nil || rendered.Err != nil || len(rendered.Messages) != 1 || rendered.Messages[0].Text != "hello ada" {
				t.Fatalf("prompt: %+v, %v", rendered, err)
			}
			refused, err := p.GetPrompt(ctx, "testkit_greet", nil)
			if err != nil || refused.Err == nil || refused.Err.Status != 400 {
				t.Fatalf("prompt without its argument: %+v, %v", refused, err)
			}
			done, err := p.Complete(ctx, seam.CompleteRequest{RefType: "prompt", RefName: "testkit_greet", Argument: "who", Value: "a"})
			if err != nil || !slices.Equal(done.Values, []string{"ada", "alan"}) {
				t.Fatalf("completion: %+v, %v", done, err)
			}

			// Resources.
			listing, err := p.ListResources(ctx)
			if err != nil || len(listing.Resources) != 1 || len(listing.Templates) != 1 {
				t.Fatalf("resources: %+v, %v", listing, err)
			}
			read, err := p.ReadResource(ctx, "testkit://notes/7")
			if err != nil || read.Err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "note 7" {
				t.Fatalf("read: %+v, %v", read, err)
			}
			missing, err := p.ReadResource(ctx, "testkit://notes/missing")
			if err != nil || missing.Err == nil || missing.Err.Status != 404 {
				t.Fatalf("read of a missing resource: %+v, %v", missing, err)
			}

			// Task operations (the test kit runs none, so it refuses
			// with its own typed error) and health.
			tasks, err := p.MCPTask(ctx, seam.TaskRequest{Op: "list", Caller: seam.Caller{ID: "test", Source: "env"}})
			if err != nil || tasks.Err == nil || tasks.Err.Status != 404 {
				t.Fatalf("task list: %+v, %v", tasks, err)
			}
			health, err := p.Health(ctx)
			if err != nil || health.Status != "ok" {
				t.Fatalf("health: %+v, %v", health, err)
			}

			if laneOf(p) != onLane {
				t.Fatalf("lane in use = %v after the calls, want %v", laneOf(p), onLane)
			}
		})
	}
}
