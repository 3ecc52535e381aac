package supervisor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// TestPublishEventsAcksAnEventWithIDAfterLocalHandlers: an event that
// carries its id is acknowledged (its wait returns) only once the local
// plugin subscribers' handlers returned, with retry when one failed; the
// event keeps its id and time on the bus. An event without an id is
// acknowledged once on the bus. (The acks' order on the stream is
// hostconn's, tested there.)
func TestPublishEventsAcksAnEventWithIDAfterLocalHandlers(t *testing.T) {
	bus := events.New(hclog.NewNullLogger())
	release := make(chan struct{})
	seen := make(chan events.Event, 8)
	defer bus.SubscribeLocalBatch("admin", []string{"*"}, oneByOne(func(ev events.Event) error {
		seen <- ev
		if ev.Type == "task.slow" {
			<-release
		}
		if ev.Type == "task.bad" {
			return errors.New("admin store down")
		}
		return nil
	}))()
	h := &hostServices{plugin: "core", bus: bus}

	// Before every plugin has subscribed, a durable event waits for them
	// off the bus, and is handed back for retry if they take longer than
	// its wait (docs/decisions.md D46).
	early, retry, err := h.PublishStreamed(seam.Event{ID: "evt_0", Type: "task.early", Data: []byte(`{}`)})
	if err != nil || retry != "" || early == nil {
		t.Fatalf("PublishStreamed = %v, %q, %v; want a wait for the plugins to subscribe", early != nil, retry, err)
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if err := early(ended); err == nil {
		t.Fatal("an event published before every plugin subscribed was called handled without them")
	}
	if len(seen) != 0 {
		t.Fatalf("%s reached the bus before every plugin subscribed", (<-seen).ID)
	}
	early, _, _ = h.PublishStreamed(seam.Event{ID: "evt_0", Type: "task.early", Data: []byte(`{}`)})
	bus.MarkSubscribed()
	if err := early(t.Context()); err != nil {
		t.Fatalf("wait = %v, want nil once every plugin subscribed and the handler returned", err)
	}
	if ev := <-seen; ev.ID != "evt_0" {
		t.Fatalf("bus got %s, want the event held until every plugin subscribed", ev.ID)
	}

	wait, retry, err := h.PublishStreamed(seam.Event{ID: "evt_1", Type: "task.slow", Time: "2026-01-01T00:00:00.000Z", Data: []byte(`{}`)})
	if err != nil || retry != "" || wait == nil {
		t.Fatalf("PublishStreamed = %v, %q, %v; want a wait for the local handlers", wait != nil, retry, err)
	}
	ev := <-seen
	if ev.ID != "evt_1" || ev.Time != "2026-01-01T00:00:00.000Z" || ev.Source != "core" {
		t.Fatalf("bus got %+v; want the publisher's id and time, source core", ev)
	}
	waited := make(chan error, 1)
	go func() { waited <- wait(t.Context()) }()
	select {
	case err := <-waited:
		t.Fatalf("the wait returned (%v) before the local handler did", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-waited; err != nil {
		t.Fatalf("wait = %v, want nil once the handler returned", err)
	}

	wait, _, _ = h.PublishStreamed(seam.Event{ID: "evt_2", Type: "task.bad", Data: []byte(`{}`)})
	<-seen
	if wait == nil || wait(t.Context()) == nil {
		t.Fatal("a failed handler's event did not ask for a retry")
	}

	if wait, retry, err := h.PublishStreamed(seam.Event{Type: "task.plain", Data: []byte(`{}`)}); wait != nil || retry != "" || err != nil {
		t.Fatalf("PublishStreamed = %v, %q, %v; want an event without an id taken at once", wait != nil, retry, err)
	}
	<-seen
	if _, _, err := h.PublishStreamed(seam.Event{Type: " "}); err == nil {
		t.Fatal("an event without a type was taken")
	}
}

// oneByOne runs h on each event of a batch in turn.
func oneByOne(h func(events.Event) error) events.BatchHandler {
	return func(evs []events.Event) []error {
		out := make([]error, len(evs))
		for i, ev := range evs {
			out[i] = h(ev)
		}
		return out
	}
}
