package outbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openEach opens a core store on the backend CAIRN_STORE names; a second
// call with the same dir opens the same store again on PostgreSQL (another
// server) and nil on bbolt (one process holds the file).
func openEach(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.OpenFor(dir, os.Getenv(store.SettingEnv))
	if err != nil {
		t.Fatalf("OpenFor: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// record commits n events, "e0".."e<n-1>", one write each.
func record(t *testing.T, st *store.Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := st.Update(func(tx kv.Tx) error {
			_, err := st.RecordEvent(tx, "task.created", map[string]any{"n": fmt.Sprintf("e%d", i)}, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// sink records what a drainer published and answers each event at once.
type sink struct {
	mu   sync.Mutex
	got  []store.OutboxEvent
	fail func(ev store.OutboxEvent) error
	// answered counts the outcomes the drainer has been told of.
	answered atomic.Int64
}

func (s *sink) publish(ev store.OutboxEvent, done func(error)) error {
	s.mu.Lock()
	s.got = append(s.got, ev)
	fail := s.fail
	s.mu.Unlock()
	var err error
	if fail != nil {
		err = fail(ev)
	}
	go func() {
		done(err)
		s.answered.Add(1)
	}()
	return nil
}

func (s *sink) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, ev := range s.got {
		out = append(out, string(ev.Data))
	}
	return out
}

func pending(t *testing.T, st *store.Store) int {
	t.Helper()
	n, err := st.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRecordEventCommitsWithTheWrite(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		st := openEach(t, t.TempDir())
		boom := errors.New("the write failed")
		err := st.Update(func(tx kv.Tx) error {
			if _, err := st.RecordEvent(tx, "task.created", map[string]any{}, time.Now()); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) && err == nil {
			t.Fatalf("update: %v", err)
		}
		if n := pending(t, st); n != 0 {
			t.Fatalf("a rolled-back write left %d outbox entries", n)
		}
		record(t, st, 0, 1)
		if n := pending(t, st); n != 1 {
			t.Fatalf("a committed write left %d outbox entries, want 1", n)
		}
	})
}

func TestDrainPublishesInOrderAndRemovesHandled(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		st := openEach(t, t.TempDir())
		record(t, st, 0, 5)
		var s sink
		d := New(st, s.publish, Options{Batch: 3})
		for {
			n, err := d.Drain(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		want := `[{"n":"e0"} {"n":"e1"} {"n":"e2"} {"n":"e3"} {"n":"e4"}]`
		if got := fmt.Sprint(s.names()); got != want {
			t.Fatalf("published %s, want %s", got, want)
		}
		ids := map[string]bool{}
		for _, ev := range s.got {
			if ev.ID == "" || ev.Time == "" || ids[ev.ID] {
				t.Fatalf("event without a final, unique id and time: %+v", ev)
			}
			ids[ev.ID] = true
		}
		if n := pending(t, st); n != 0 {
			t.Fatalf("%d entries left after every event was handled", n)
		}
	})
}

func TestDrainKeepsAnEventNotHandledAndRetriesItUnderItsID(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		st := openEach(t, t.TempDir())
		record(t, st, 0, 2)
		var s sink
		s.fail = func(ev store.OutboxEvent) error {
			if string(ev.Data) == `{"n":"e1"}` {
				return errors.New("admin's store is down")
			}
			return nil
		}
		now := time.Now()
		d := New(st, s.publish, Options{Retry: time.Second, Now: func() time.Time { return now }})
		if _, err := d.Drain(context.Background()); err == nil {
			t.Fatal("a failed event was not reported")
		}
		if n := pending(t, st); n != 1 {
			t.Fatalf("%d entries left, want the one not handled", n)
		}
		if n, _ := d.Drain(context.Background()); n != 0 {
			t.Fatal("an event released for a retry was claimed before its retry time")
		}
		now = now.Add(1500 * time.Millisecond)
		if n, err := d.Drain(context.Background()); n != 1 || err == nil {
			t.Fatalf("first retry drained %d (%v), want 1 failing again", n, err)
		}
		now = now.Add(1500 * time.Millisecond)
		if n, _ := d.Drain(context.Background()); n != 0 {
			t.Fatal("the pause before a retry did not double after a second failure")
		}
		s.fail = nil
		now = now.Add(time.Second)
		if n, err := d.Drain(context.Background()); n != 1 || err != nil {
			t.Fatalf("second retry drained %d (%v), want 1", n, err)
		}
		if s.got[1].ID != s.got[2].ID || s.got[2].ID != s.got[3].ID {
			t.Fatalf("a retry changed the event's id: %s, %s, %s", s.got[1].ID, s.got[2].ID, s.got[3].ID)
		}
		if n := pending(t, st); n != 0 {
			t.Fatalf("%d entries left", n)
		}
	})
}

// TestRedrainAfterCrash: a drainer that claimed entries and died before
// hearing them handled leaves them; they are published again under the same
// ids — at the next start on bbolt, by another server once the lease lapsed
// on PostgreSQL.
func TestRedrainAfterCrash(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		dir := t.TempDir()
		st := openEach(t, dir)
		record(t, st, 0, 3)
		// The dead server had claimed (and maybe published) the entries
		// but never heard them handled. The drainers' clocks are set, so
		// a loaded machine's pauses cannot lapse the lease early
		// (docs/decisions.md D42).
		claimed := time.Now()
		lost, err := st.ClaimEvents("dead-server", claimed, 200*time.Millisecond, 10)
		if err != nil || len(lost) != 3 {
			t.Fatalf("claim: %d, %v", len(lost), err)
		}
		during := func() time.Time { return claimed.Add(100 * time.Millisecond) }
		if n, _ := New(st, (&sink{}).publish, Options{Now: during}).Drain(context.Background()); n != 0 {
			t.Fatal("entries under a live lease were claimed again")
		}
		var s sink
		next := st
		if os.Getenv(store.SettingEnv) != "" {
			next = openEach(t, dir) // another server on the same database
		} else if err := st.ClearEventLeases(); err != nil { // what Run does at start
			t.Fatal(err)
		}
		after := func() time.Time { return claimed.Add(250 * time.Millisecond) }
		if n, err := New(next, s.publish, Options{Now: after}).Drain(context.Background()); n != 3 || err != nil {
			t.Fatalf("redrain took %d (%v), want 3", n, err)
		}
		for i, ev := range s.got {
			if ev.ID != lost[i].ID {
				t.Fatalf("redelivered event %d has id %s, first published as %s", i, ev.ID, lost[i].ID)
			}
		}
		if n := pending(t, st); n != 0 {
			t.Fatalf("%d entries left", n)
		}
	})
}

// TestTwoDrainersNeverBothPublishAnEntry: drainers racing over one outbox
// (two servers on PostgreSQL, two goroutines on bbolt) publish every entry
// exactly once while their leases hold.
func TestTwoDrainersNeverBothPublishAnEntry(t *testing.T) {
	pgtest.EachStore(t, func(t *testing.T) {
		dir := t.TempDir()
		a := openEach(t, dir)
		b := a
		if os.Getenv(store.SettingEnv) != "" {
			b = openEach(t, dir)
		}
		const total = 60
		var seen sync.Map
		var dup, count atomic.Int32
		publish := func(ev store.OutboxEvent, done func(error)) error {
			if _, loaded := seen.LoadOrStore(ev.ID, true); loaded {
				dup.Add(1)
			}
			count.Add(1)
			// The acknowledgement comes a moment later, as a remote one
			// would: the other drainer may look at the entry meanwhile.
			go func() { time.Sleep(time.Millisecond); done(nil) }()
			return nil
		}
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for _, st := range []*store.Store{a, b} {
			d := New(st, publish, Options{Batch: 4})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := d.Drain(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		record(t, a, 0, total)
		// The counts below say what went wrong if this wait ends unmet.
		poll.Within(20*time.Second, func() bool { return pending(t, a) == 0 })
		close(stop)
		wg.Wait()
		if dup.Load() != 0 || count.Load() != total {
			t.Fatalf("published %d times with %d duplicates; want %d and 0", count.Load(), dup.Load(), total)
		}
	})
}
