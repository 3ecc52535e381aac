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

// Three managers on one store (three processes on one file, three servers
// on one database) drain one queue at once: every event reaches the
// webhook exactly once.
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
