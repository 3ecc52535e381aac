package webhooks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

func TestEachDeliveryClaimedByOneServer(t *testing.T) {
	pgtest.EachStore(t, testEachDeliveryClaimedByOneServer)
}

// Three managers on one store drain one queue at once (three servers on
// one PostgreSQL database; on bbolt three Stores of one process sharing
// its handle, processes taking turns on the file as bolt_test.go shows):
// every event reaches the webhook exactly once.
func testEachDeliveryClaimedByOneServer(t *testing.T) {
	dir := t.TempDir()
	r := newReceiver(t, 0)
	servers := []*Manager{devManager(t, openStore(t, dir)), devManager(t, openStore(t, dir)), devManager(t, openStore(t, dir))}
	register(t, servers[0], r, "task.*")
	const events = 30
	for i := range events {
		ev := store.Event{ID: fmt.Sprintf("evt_%d", i), Type: "task.created", Source: "core", Time: "2026-11-22T10:00:00.000Z", Data: []byte(`{"task_id":"T-1"}`)}
		if err := servers[i%3].EnqueueEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, m := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && r.calls.Load() < events {
				if _, err := m.ProcessDue(ctx); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	time.Sleep(50 * time.Millisecond) // a duplicate would arrive now
	if got := r.calls.Load(); got != events {
		t.Fatalf("webhook called %d times for %d events", got, events)
	}
	seen := map[any]int{}
	r.mu.Lock()
	for _, b := range r.bodies {
		seen[b["id"]]++
	}
	r.mu.Unlock()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %v delivered %d times", id, n)
		}
	}
}

func TestClaimOfDeadServerRetriedByAnother(t *testing.T) {
	pgtest.EachStore(t, testClaimOfDeadServerRetriedByAnother)
}

// A server claims a delivery and dies before attempting it: no other
// server sends it while the claim holds, one does once it lapses, and the
// dead server's late outcome is ignored.
func testClaimOfDeadServerRetriedByAnother(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	withClock := func(o *Options) { o.Now = clock }
	r := newReceiver(t, 0)
	dead, alive := devManager(t, openStore(t, dir), withClock), devManager(t, openStore(t, dir), withClock)
	register(t, dead, r, "task.*")
	ev := store.Event{ID: "evt_1", Type: "task.created", Source: "core", Time: "2026-11-22T10:00:00.000Z", Data: []byte(`{"task_id":"T-1"}`)}
	if err := dead.EnqueueEvent(ev); err != nil {
		t.Fatal(err)
	}
	jobs, err := dead.claimDue(4)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %d jobs, %v", len(jobs), err)
	}
	ctx := context.Background()
	if n, err := alive.ProcessDue(ctx); err != nil || n != 0 || r.calls.Load() != 0 {
		t.Fatalf("a claimed delivery was attempted by another server: %d %v", n, err)
	}
	mu.Lock()
	now = now.Add(time.Duration(jobs[0].w.Config.Timeout)*time.Millisecond + 31*time.Second)
	mu.Unlock()
	if _, err := alive.ProcessDue(ctx); err != nil {
		t.Fatal(err)
	}
	if r.calls.Load() != 1 {
		t.Fatalf("after the claim lapsed the webhook was called %d times, want 1", r.calls.Load())
	}
	if pending, err := dead.finish(jobs[0], outcome{StatusCode: 200}); err != nil || pending {
		t.Fatalf("late outcome: pending %v, %v", pending, err)
	}
	h, _ := alive.GetDeliveryHistory(jobs[0].w.ID, HistoryOptions{})
	if len(h) != 1 || h[0].Status != DeliveryDelivered || h[0].Attempts != 1 {
		t.Fatalf("history after the late outcome: %+v", h)
	}
}

func TestTwoServersClaimDisjointDeliveries(t *testing.T) {
	pgtest.EachStore(t, testTwoServersClaimDisjointDeliveries)
}

// Two managers on one store claim at once, without finishing, until
// nothing is left: every queued delivery is claimed by exactly one of them
// (on PostgreSQL with FOR UPDATE SKIP LOCKED, neither waiting for the
// other). Their attempts then reach each webhook once per event.
func testTwoServersClaimDisjointDeliveries(t *testing.T) {
	dir := t.TempDir()
	servers := []*Manager{devManager(t, openStore(t, dir)), devManager(t, openStore(t, dir))}
	const hooks, events = 4, 10
	receivers := make([]*receiver, hooks)
	for i := range receivers {
		receivers[i] = newReceiver(t, 0)
		register(t, servers[0], receivers[i], "task.*")
	}
	for i := range events {
		ev := store.Event{ID: fmt.Sprintf("evt_%d", i), Type: "task.created", Source: "core", Time: "2026-11-22T10:00:00.000Z", Data: []byte(`{"task_id":"T-1"}`)}
		if err := servers[i%2].EnqueueEvent(ev); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	claimedBy := map[string]int{}
	jobs := make([][]job, len(servers))
	var wg sync.WaitGroup
	for s, m := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bounded: a claim taken twice would keep the loop going.
			for range hooks * events {
				batch, err := m.claimDue(3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(batch) == 0 {
					return
				}
				mu.Lock()
				for _, j := range batch {
					if other, dup := claimedBy[j.d.ID]; dup {
						t.Errorf("delivery %s claimed by server %d and server %d", j.d.ID, other, s)
					}
					claimedBy[j.d.ID] = s
				}
				mu.Unlock()
				jobs[s] = append(jobs[s], batch...)
			}
		}()
	}
	wg.Wait()
	if len(claimedBy) != hooks*events {
		t.Fatalf("%d deliveries claimed, want %d", len(claimedBy), hooks*events)
	}
	for s, m := range servers {
		if delivered, _, _ := m.runJobs(context.Background(), jobs[s]); delivered != len(jobs[s]) {
			t.Fatalf("server %d delivered %d of its %d claims", s, delivered, len(jobs[s]))
		}
		if n, err := m.ProcessDue(context.Background()); err != nil || n != 0 {
			t.Fatalf("server %d found %d more to attempt (%v), want none", s, n, err)
		}
	}
	for i, r := range receivers {
		seen := map[any]int{}
		r.mu.Lock()
		for _, b := range r.bodies {
			seen[b["id"]]++
		}
		r.mu.Unlock()
		if r.calls.Load() != events || len(seen) != events {
			t.Errorf("webhook %d: %d calls for %d distinct events, want %d once each", i, r.calls.Load(), len(seen), events)
		}
	}
}
