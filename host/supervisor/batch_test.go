package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
)

// TestEventsReachPluginsWithAndWithoutBatches: a plugin on this SDK
// advertises event batches and the host sends it queued events in batches;
// one that does not (CAIRN_LANE_EVENT_BATCHES=off makes the SDK answer as
// an older one) gets them one by one. Either way every event arrives once,
// in publish order, each awaiting publisher hears its outcome, and the
// plugin does not hear its own events.
func TestEventsReachPluginsWithAndWithoutBatches(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     []string
		batches bool
	}{
		{"batches", nil, true},
		{"older plugin, one by one", []string{"CAIRN_LANE_EVENT_BATCHES=off"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t, Backoff{})
			p := startTestkit(t, Spec{Env: tt.env}, env, Hooks{})
			if got := p.batchLane() != nil; got != tt.batches {
				t.Fatalf("host sends batches = %v, want %v", got, tt.batches)
			}
			const n = 200
			waits := make([]func(context.Context) error, 0, n)
			for i := range n {
				src := "other"
				if i%10 == 3 {
					src = "testkit" // its own: never delivered to it
				}
				_, wait := env.Bus.PublishAwait(events.Event{Type: "demo.n", Source: src, Data: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
				waits = append(waits, wait)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i, wait := range waits {
				if err := wait(ctx); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
			}
			out, err := call(p, "testkit_events", map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for _, e := range out["events"].([]any) {
				m := e.(map[string]any)
				var d struct{ I int }
				raw, _ := json.Marshal(m["data"])
				if err := json.Unmarshal(raw, &d); err != nil {
					t.Fatalf("event data %s: %v", raw, err)
				}
				if next%10 == 3 {
					next++
				}
				if d.I != next || m["source"] != "other" {
					t.Fatalf("plugin recorded event %d from %v, want %d from other", d.I, m["source"], next)
				}
				next++
			}
			if next != n {
				t.Fatalf("plugin recorded events up to %d, want %d", next, n)
			}
		})
	}
}
