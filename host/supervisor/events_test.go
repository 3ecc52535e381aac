package supervisor

import (
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/host/events"
)

// TestOverlappingSubscriptionsDeliverOnce: a plugin subscribed to "demo.*"
// and "*" gets each event once, so each of its two handlers records it
// once (issue 11: the handlers ran twice). It also does not hear its own
// events, and a restart keeps exactly one subscription.
func TestOverlappingSubscriptionsDeliverOnce(t *testing.T) {
	env := testEnv(t, Backoff{})
	p := startTestkit(t, Spec{Env: []string{"TESTKIT_SUBSCRIBE=*"}}, env, Hooks{})
	if _, _, subs := env.Bus.Stats(); subs != 1 {
		t.Fatalf("bus subscriptions = %d, want 1 for the plugin's pattern set", subs)
	}
	env.Bus.Publish(events.Event{Type: "demo.x", Source: "other", Data: json.RawMessage(`{"n":1}`)})
	env.Bus.Publish(events.Event{Type: "demo.self", Source: "testkit"})
	env.Bus.Publish(events.Event{Type: "demo.end", Source: "other"})
	var got []any
	waitFor(t, "both handlers to record demo.end", func() bool {
		out, err := call(p, "testkit_events", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		got = out["events"].([]any)
		n := 0
		for _, e := range got {
			if e.(map[string]any)["type"] == "demo.end" {
				n++
			}
		}
		return n >= 2
	})
	count := map[string]int{}
	for _, e := range got {
		m := e.(map[string]any)
		count[m["type"].(string)+" via "+m["pattern"].(string)]++
	}
	want := map[string]int{"demo.x via demo.*": 1, "demo.x via *": 1, "demo.end via demo.*": 1, "demo.end via *": 1}
	if len(count) != len(want) {
		t.Fatalf("recorded %v, want %v", count, want)
	}
	for k, n := range want {
		if count[k] != n {
			t.Fatalf("recorded %v, want %v", count, want)
		}
	}

	kill(t, p)
	waitFor(t, "the plugin to come back", func() bool { return p.Status().State == StateRunning })
	if _, _, subs := env.Bus.Stats(); subs != 1 {
		t.Fatalf("bus subscriptions after a restart = %d, want 1", subs)
	}
}
