package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// commitEvent records one event in a group commit, as the core's writes do.
func commitEvent(t testing.TB, st *store.Store, name string) {
	t.Helper()
	if err := st.Commit(func(tx kv.Tx) error {
		_, err := st.RecordEvent(tx, "task.created", map[string]any{"n": name}, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// runDrainer starts d until the test ends.
func runDrainer(t testing.TB, d *Drainer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := d.Start(ctx)
	t.Cleanup(func() { cancel(); <-done })
}

// waitFor polls cond for up to a minute: a deadline only ends a wait that
// failed, and a loaded machine is slow (docs/decisions.md D42).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, time.Minute, what, cond)
}

// A running drainer publishes each write's event with no claim commit and
// removes it with no commit of its own: n writes, one after another, cost
// n commits, and the next commit removes what they left (three commits a
// write before). With an hour's removal delay no removal gets a commit of
// its own while the test runs, however slowly a loaded machine runs it, so
// every commit counted is one of the test's writes (docs/decisions.md D42).
func TestRunPublishesWritesWithoutClaimCommits(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		st := openEach(t, t.TempDir())
		var s sink
		// No poll in the test's time: only the handoff can publish.
		runDrainer(t, New(st, s.publish, Options{Poll: time.Hour, RemovalDelay: time.Hour}))
		commitEvent(t, st, "warm")
		waitFor(t, "the first event handled", func() bool { return s.answered.Load() == 1 })
		const n = 20
		before := st.Commits()
		for i := 0; i < n; i++ {
			commitEvent(t, st, fmt.Sprint("e", i))
		}
		waitFor(t, "every event handled", func() bool { return s.answered.Load() == n+1 })
		if c := st.Commits() - before; c != n {
			t.Fatalf("%d writes cost %d commits, want %d: the drainer claimed or removed in commits of its own", n, c, n)
		}
		if p := pending(t, st); p == 0 {
			t.Fatal("the last event left without a commit to carry its removal")
		}
		if err := st.Commit(func(kv.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if p, c := pending(t, st), st.Commits()-before; p != 0 || c != n+1 {
			t.Fatalf("after the next commit %d events pending and %d commits in all, want 0 and %d", p, c, n+1)
		}
		got := s.names()
		for i := 0; i < n; i++ {
			if want := fmt.Sprintf(`{"n":"e%d"}`, i); got[i+1] != want {
				t.Fatalf("published %v, want e0..e%d in order", got, n-1)
			}
		}
	})
}

// A taken event that was not handled is released and published again,
// under its id, after the retry pause.
func TestRunRetriesATakenEventNotHandled(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		st := openEach(t, t.TempDir())
		var failed atomic.Bool
		var s sink
		s.fail = func(store.OutboxEvent) error {
			if failed.CompareAndSwap(false, true) {
				return errors.New("admin's store is down")
			}
			return nil
		}
		runDrainer(t, New(st, s.publish, Options{Poll: 20 * time.Millisecond, Retry: 50 * time.Millisecond}))
		commitEvent(t, st, "once")
		waitFor(t, "the retry handled and removed", func() bool { return len(s.names()) == 2 && pending(t, st) == 0 })
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.got[0].ID != s.got[1].ID {
			t.Fatalf("the retry changed the event's id: %s, %s", s.got[0].ID, s.got[1].ID)
		}
	})
}
