package webhooks

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// TestEnqueueEventOncePerEventID: a bus event that arrives again under the
// same id (redelivered after its server died) queues nothing
// new; another event, and a webhook registered since, still queue.
func TestEnqueueEventOncePerEventID(t *testing.T) {
	pgtest.EachStore(t, testEnqueueEventOncePerEventID)
}

func testEnqueueEventOncePerEventID(t *testing.T) {
	st := openStore(t, t.TempDir())
	m := devManager(t, st)
	first := register(t, m, newReceiver(t, 0))
	ev := store.Event{ID: "evt_once", Type: "audit.finalized", Time: "t", Data: json.RawMessage(`{}`)}
	for i := 0; i < 3; i++ {
		if err := m.EnqueueEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := m.GetDeliveryHistory(first, HistoryOptions{}); len(h) != 1 {
		t.Fatalf("an event enqueued 3 times under one id made %d deliveries, want 1", len(h))
	}
	second := register(t, m, newReceiver(t, 0))
	if err := m.EnqueueEvent(ev); err != nil {
		t.Fatal(err)
	}
	if h, _ := m.GetDeliveryHistory(second, HistoryOptions{}); len(h) != 1 {
		t.Fatalf("a webhook registered after the first delivery got %d deliveries, want 1", len(h))
	}
	if h, _ := m.GetDeliveryHistory(first, HistoryOptions{}); len(h) != 1 {
		t.Fatalf("the first webhook got the event again: %d deliveries", len(h))
	}
	other := ev
	other.ID = "evt_other"
	if err := m.EnqueueEvent(other); err != nil {
		t.Fatal(err)
	}
	if h, _ := m.GetDeliveryHistory(first, HistoryOptions{}); len(h) != 2 {
		t.Fatalf("a new event id was not queued: %d deliveries, want 2", len(h))
	}
}

// A webhook subscribed to every event gets every event of the catalog, not
// the host's own notifications that share the bus.
func TestHostNotificationsAreNotWebhookEvents(t *testing.T) {
	st := openStore(t, t.TempDir())
	m := devManager(t, st)
	every := register(t, m, newReceiver(t, 0))
	star := register(t, m, newReceiver(t, 0), "*")
	for i, typ := range []string{"resource.updated", "prompts.changed", "task.created"} {
		ev := store.Event{ID: fmt.Sprint("evt_", i), Type: typ, Time: "t", Data: json.RawMessage(`{"uri":"cairn://tasks/T-1"}`)}
		if err := m.EnqueueEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{every, star} {
		h, err := m.GetDeliveryHistory(id, HistoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].EventType != "task.created" {
			t.Fatalf("webhook %s got %+v, want task.created only", id, h)
		}
	}
}

// TestRedeliveryAfterHistoryPruned: a redelivered bus event queues nothing
// new even when the webhook's delivery history has since dropped the
// event's delivery (a busy webhook prunes its history long before a dead
// server's events are drained again).
func TestRedeliveryAfterHistoryPruned(t *testing.T) {
	pgtest.EachStore(t, testRedeliveryAfterHistoryPruned)
}

func testRedeliveryAfterHistoryPruned(t *testing.T) {
	saved := maxHistoryPerWebhook
	maxHistoryPerWebhook = 5
	defer func() { maxHistoryPerWebhook = saved }()
	st := openStore(t, t.TempDir())
	m := devManager(t, st)
	r := newReceiver(t, 0)
	register(t, m, r)
	event := func(i int) store.Event {
		return store.Event{ID: fmt.Sprintf("evt_%02d", i), Type: "task.created", Time: "2026-11-22T00:00:00.000Z", Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
	}
	for i := 0; i < 12; i++ {
		if err := m.EnqueueEvent(event(i)); err != nil {
			t.Fatal(err)
		}
		drainAll(t, m)
	}
	// Every event arrives again, the oldest first, as a drain of what a
	// dead server left would send them.
	for i := 0; i < 12; i++ {
		if err := m.EnqueueEvent(event(i)); err != nil {
			t.Fatal(err)
		}
	}
	drainAll(t, m)
	got := r.seqOf()
	sortInts(got)
	want := make([]int, 12)
	for i := range want {
		want[i] = i
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the receiver got %v, want each of 0…11 once", got)
	}
}
