package supervisor

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/events"
)

// TestOverlappingSubscriptionsDeliverOnce: a plugin subscribed to "demo.*"
// and "*" gets each event once, so each of its two handlers records it
// once (the handlers once ran twice). It also does not hear its own
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

// TestPluginEventsArriveOnceInOrder: a plugin's tool calls publish without
// waiting for the host, yet the bus gets each event once, in the order the
// calls published them, with the plugin as source; events still queued
// when the plugin stops reach the bus before it exits.
func TestPluginEventsArriveOnceInOrder(t *testing.T) {
	env := testEnv(t, Backoff{})
	p := startTestkit(t, Spec{}, env, Hooks{})
	var mu sync.Mutex
	var got []events.Event
	unsub := env.Bus.Subscribe("test", "order.*", func(ev events.Event) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	defer unsub()
	const n = 300
	for i := 0; i < n; i++ {
		if _, err := call(p, "testkit_publish", map[string]any{"type": "order.n", "data": map[string]any{"i": i}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Stop(context.Background())
	waitFor(t, "every event on the bus", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= n
	})
	time.Sleep(50 * time.Millisecond) // a duplicate would show up now
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("bus got %d events, want %d", len(got), n)
	}
	for i, ev := range got {
		var d struct{ I int }
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.I != i || ev.Source != "testkit" {
			t.Fatalf("event %d = %s from %s, want i=%d from testkit", i, ev.Data, ev.Source, i)
		}
	}
}
