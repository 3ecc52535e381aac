package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// seqOf reads the "n" of each received event, in arrival order.
func (r *receiver) seqOf() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, b := range r.bodies {
		d, _ := b["data"].(map[string]any)
		n, _ := d["n"].(float64)
		out = append(out, int(n))
	}
	return out
}

// drainAll runs the delivery loop until nothing is due.
func drainAll(t *testing.T, m *Manager) {
	t.Helper()
	for i := 0; i < 100; i++ {
		n, err := m.ProcessDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("deliveries kept coming")
}

func TestPausedWebhookHoldsEventsAcrossRestartAndDeliversInOrder(t *testing.T) {
	pgtest.EachStore(t, testPausedWebhookHoldsEventsAcrossRestartAndDeliversInOrder)
}

func testPausedWebhookHoldsEventsAcrossRestartAndDeliversInOrder(t *testing.T) {
	dir := t.TempDir()
	r := newReceiver(t, 0)
	st1 := openStore(t, dir)
	m1 := devManager(t, st1)
	id := register(t, m1, r, "task.*")
	if ok, err := m1.Pause(id); !ok || err != nil {
		t.Fatal(ok, err)
	}
	const n = 12
	for i := 1; i <= n; i++ {
		res, err := m1.TriggerEvent(context.Background(), "task.created", map[string]any{"n": i})
		if err != nil || res.Held != 1 || res.Delivered != 0 {
			t.Fatalf("trigger %d while paused: %+v %v", i, res, err)
		}
	}
	// Bus events (EnqueueEvent) are held the same way.
	if err := m1.EnqueueEvent(store.Event{ID: "evt_bus", Type: "task.updated", Time: "2026-11-22T00:00:00.000Z", Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n+1))}); err != nil {
		t.Fatal(err)
	}
	drainAll(t, m1) // nothing is due while paused
	if got := r.calls.Load(); got != 0 {
		t.Fatalf("paused webhook received %d requests", got)
	}
	if h, _ := m1.GetDeliveryHistory(id, HistoryOptions{Status: DeliveryHeld}); len(h) != n+1 {
		t.Fatalf("held: %d", len(h))
	}

	// Restart: the first store closed, a new one and a new manager,
	// nothing carried in memory.
	st1.Close()
	m2 := devManager(t, openStore(t, dir))
	if ok, err := m2.Resume(id); !ok || err != nil {
		t.Fatal(ok, err)
	}
	drainAll(t, m2)
	got := r.seqOf()
	if len(got) != n+1 {
		t.Fatalf("delivered %d of %d: %v", len(got), n+1, got)
	}
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("out of order: %v", got)
		}
	}
	if r.badSig.Load() != 0 {
		t.Fatal("bad signatures")
	}
	if h, _ := m2.GetDeliveryHistory(id, HistoryOptions{Status: DeliveryDelivered}); len(h) != n+1 {
		t.Fatalf("history delivered: %d", len(h))
	}
	if s, _ := m2.GetDeliveryStats(); s.Held != 0 || s.Delivered != n+1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestHeldDeliveriesExpireAfterTheRetentionWithAReason(t *testing.T) {
	pgtest.EachStore(t, testHeldDeliveriesExpireAfterTheRetentionWithAReason)
}

func testHeldDeliveriesExpireAfterTheRetentionWithAReason(t *testing.T) {
	dir := t.TempDir()
	r := newReceiver(t, 0)
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	m := devManager(t, openStore(t, dir), func(o *Options) { o.Now = clock; o.HeldRetention = 24 * time.Hour })
	id := register(t, m, r, "task.*")
	_, _ = m.Pause(id)
	_, _ = m.TriggerEvent(context.Background(), "task.created", map[string]any{"n": 1})
	advance(23 * time.Hour)
	_, _ = m.TriggerEvent(context.Background(), "task.created", map[string]any{"n": 2})
	if k, err := m.ExpireHeld(); err != nil || k != 0 {
		t.Fatalf("expired inside the retention: %d %v", k, err)
	}
	advance(2 * time.Hour) // the first is 25 h old, the second 2 h
	if k, err := m.ExpireHeld(); err != nil || k != 1 {
		t.Fatalf("expired %d %v", k, err)
	}
	h, _ := m.GetDeliveryHistory(id, HistoryOptions{Status: DeliveryExpired})
	if len(h) != 1 || !strings.Contains(h[0].Reason, "retention of 24h0m0s") || h[0].Attempts != 0 {
		t.Fatalf("expired entry: %+v", h)
	}
	_, _ = m.Resume(id)
	drainAll(t, m)
	if got := r.seqOf(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("after resume: %v", got)
	}
	// Expiry also happens at resume for what the sweep has not reached.
	_, _ = m.Pause(id)
	_, _ = m.TriggerEvent(context.Background(), "task.created", map[string]any{"n": 3})
	advance(25 * time.Hour)
	_, _ = m.Resume(id)
	drainAll(t, m)
	if got := r.seqOf(); len(got) != 1 {
		t.Fatalf("an expired delivery was sent: %v", got)
	}
	if h, _ := m.GetDeliveryHistory(id, HistoryOptions{Status: DeliveryExpired}); len(h) != 2 {
		t.Fatalf("expired entries: %d", len(h))
	}
}

func TestPendingRetriesOfAPausedWebhookAreHeldNotSpun(t *testing.T) {
	pgtest.EachStore(t, testPendingRetriesOfAPausedWebhookAreHeldNotSpun)
}

func testPendingRetriesOfAPausedWebhookAreHeldNotSpun(t *testing.T) {
	dir := t.TempDir()
	r := newReceiver(t, 1) // the first attempt fails
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	m := devManager(t, openStore(t, dir), func(o *Options) { o.Now = clock })
	id := register(t, m, r, "task.*")
	if res, _ := m.TriggerEvent(context.Background(), "task.created", map[string]any{"n": 1}); res.Pending != 1 {
		t.Fatalf("%+v", res)
	}
	_, _ = m.Pause(id)
	mu.Lock()
	now = now.Add(time.Minute) // the retry is due (backoff ≤ 20 ms)
	mu.Unlock()
	drainAll(t, m)
	// The due retry became held: the schedule is empty, nothing spins.
	if !m.nextDue().IsZero() {
		t.Fatal("a paused webhook's retry stays scheduled")
	}
	if h, _ := m.GetDeliveryHistory(id, HistoryOptions{Status: DeliveryHeld}); len(h) != 1 {
		t.Fatalf("held: %+v", h)
	}
	_, _ = m.Resume(id)
	drainAll(t, m)
	if got := r.seqOf(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("after resume: %v", got)
	}
}

func TestWorkspaceScopedWebhooksReceiveOnlyTheirEvents(t *testing.T) {
	pgtest.EachStore(t, testWorkspaceScopedWebhooksReceiveOnlyTheirEvents)
}

func testWorkspaceScopedWebhooksReceiveOnlyTheirEvents(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	// A project of workspace ws_a, as the admin library stores it.
	if err := st.Update(func(tx store.Tx) error {
		if err := tx.Bucket([]byte(store.BucketProjectSlug)).Put([]byte("billing"), []byte("prj_1")); err != nil {
			return err
		}
		return store.Put(tx, store.BucketProjects, []byte("prj_1"), map[string]any{"id": "prj_1", "workspace_id": "ws_a", "slug": "billing"})
	}); err != nil {
		t.Fatal(err)
	}
	m := devManager(t, st)
	ra, rb, rall := newReceiver(t, 0), newReceiver(t, 0), newReceiver(t, 0)
	for _, x := range []struct {
		r  *receiver
		ws string
	}{{ra, "ws_a"}, {rb, "ws_b"}, {rall, ""}} {
		res, err := m.Register(context.Background(), RegisterOptions{URL: x.r.srv.URL, WorkspaceID: x.ws})
		if err != nil {
			t.Fatal(err)
		}
		x.r.secret = res.Webhook.Secret
	}
	events := []store.Event{
		{ID: "e1", Type: "task.created", Data: json.RawMessage(`{"n":1,"project":"billing"}`)},   // ws_a by project
		{ID: "e2", Type: "member.added", Data: json.RawMessage(`{"n":2,"workspace_id":"ws_b"}`)}, // ws_b
		{ID: "e3", Type: "thought.recorded", Data: json.RawMessage(`{"n":3}`)},                   // no workspace
	}
	for _, ev := range events {
		ev.Time = "2026-11-22T00:00:00.000Z"
		if err := m.EnqueueEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	drainAll(t, m)
	for _, c := range []struct {
		r    *receiver
		want string
	}{{ra, "[1]"}, {rb, "[2]"}, {rall, "[1 2 3]"}} {
		got := c.r.seqOf()
		// The unscoped receiver gets them one webhook at a time, any order.
		if c.r == rall {
			sortInts(got)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("got %v, want %s", got, c.want)
		}
	}
	// A trigger aimed at one workspace reaches only its webhooks.
	res, err := m.TriggerEventFor(context.Background(), "ws_b", "usage.daily_reset", map[string]any{"n": 4})
	if err != nil || res.Triggered != 1 || res.Delivered != 1 {
		t.Fatalf("workspace trigger: %+v %v", res, err)
	}
}

func sortInts(v []int) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
