package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

func (g *group) pendingCalls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// Calls that arrive while a group commit's transaction is being built join
// that transaction: one durable commit for all of them, each seeing the
// writes of the calls before it.
func TestGroupCommitJoinsTheOpenTransaction(t *testing.T) {
	pgtest.EachStore(t, testGroupCommitJoinsTheOpenTransaction)
}

func testGroupCommitJoinsTheOpenTransaction(t *testing.T) {
	s, _ := openEach(t)
	const late = 5
	before := s.Commits()
	var wg sync.WaitGroup
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- s.Commit(func(tx kv.Tx) error {
			// Hold the transaction open until the late calls are queued.
			if !poll.Within(time.Minute, func() bool { return s.group.pendingCalls() >= late }) {
				return fmt.Errorf("late calls never queued")
			}
			_, err := NextID(tx, CounterThought)
			return err
		})
	}()
	// The first call is the committer once its fn runs.
	poll.Until(t, time.Minute, "the first call to commit", func() bool { return s.group.pendingCalls() == 0 && s.groupRunning() })
	seen := make([]uint64, late)
	for i := 0; i < late; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := s.Commit(func(tx kv.Tx) error {
				var err error
				seen[i], err = NextID(tx, CounterThought)
				return err
			}); err != nil {
				t.Errorf("late call %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if got := s.Commits() - before; got != 1 {
		t.Errorf("%d durable commits, want 1: the late calls must join the open transaction", got)
	}
	for i, n := range seen {
		if n < 2 || n > late+1 {
			t.Errorf("late call %d got number %d, want one after the first call's", i, n)
		}
	}
}

func (s *Store) groupRunning() bool {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return s.group.running
}

// hasLingered reports whether a transaction of g has waited for company
// (linger.go makes arrived on the first wait).
func (g *group) hasLingered() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arrived != nil
}

// After commits of two calls, a transaction holding one call lingers for a
// second and commits both at once; a store whose batches were of one (a lone
// writer) never lingers.
func TestGroupCommitLingersOnlyUnderLoad(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	s.group.lingerMax = time.Hour // only an arrival ends the wait
	s.group.committed(2)
	before := s.Commits()
	second := make(chan error, 1)
	err := s.Commit(func(tx kv.Tx) error {
		go func() {
			// Arrive after this transaction ran out of calls to run.
			if !poll.Within(time.Minute, s.group.hasLingered) {
				second <- fmt.Errorf("the transaction never lingered")
				return
			}
			second <- s.Commit(func(tx kv.Tx) error { _, err := NextID(tx, CounterThought); return err })
		}()
		_, err := NextID(tx, CounterThought)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := s.Commits() - before; got != 1 {
		t.Errorf("%d durable commits, want 1: the transaction should have waited for the second call", got)
	}

	// A lingering transaction sets the end of its wait; a lone writer's
	// never does.
	lone, _ := openTemp(t)
	lone.group.lingerMax = time.Nanosecond
	for i := 0; i < 3; i++ {
		if err := lone.Commit(func(tx kv.Tx) error { _, err := NextID(tx, CounterThought); return err }); err != nil {
			t.Fatal(err)
		}
	}
	var until time.Time
	if lone.group.linger(1, &until, false); !until.IsZero() {
		t.Errorf("after a lone writer's commits a transaction of one started to linger: it must commit at once")
	}
}

// A transaction takes in at most maxBatch calls; the calls beyond wait for
// the next one, however many keep arriving.
func TestGroupCommitBatchIsBounded(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	s.group.committed(maxBatch) // a peak that would have it linger
	const calls = maxBatch + 40
	before := s.Commits()
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Commit(func(tx kv.Tx) error { <-release; return nil })
	}()
	poll.Until(t, time.Minute, "the first call to commit", func() bool { return s.group.pendingCalls() == 0 && s.groupRunning() })
	for i := 1; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Commit(func(tx kv.Tx) error { _, err := NextID(tx, CounterThought); return err }); err != nil {
				t.Error(err)
			}
		}()
	}
	poll.Until(t, time.Minute, "the other calls to queue", func() bool { return s.group.pendingCalls() >= calls-1 })
	close(release)
	wg.Wait()
	if got := s.Commits() - before; got != 2 {
		t.Errorf("%d commits for %d calls, want 2 (a full transaction, then the rest)", got, calls)
	}
	_ = s.View(func(tx kv.Tx) error {
		if got := PeekID(tx, CounterThought); got != calls-1 {
			t.Errorf("counter %d, want %d", got, calls-1)
		}
		return nil
	})
}

// A shared transaction on PostgreSQL takes in shared calls only; an
// exclusive call queued behind it waits for the next transaction, and the
// shared one neither waits for it nor spins on it. (It spun once: its
// lingering saw a call pending, and joining refused it, forever.)
func TestSharedBatchLeavesAnExclusiveCallForTheNext(t *testing.T) {
	t.Parallel()
	s, err := OpenPostgres(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inside, release := make(chan struct{}), make(chan struct{})
	put := func(key string) func(kv.Tx) error {
		return func(tx kv.Tx) error { return tx.Bucket([]byte(BucketMeta)).Put([]byte(key), []byte("x")) }
	}
	done := make(chan error, 3)
	go func() {
		done <- s.CommitShared(func(tx kv.Tx) error {
			select {
			case <-inside:
			default:
				close(inside)
			}
			<-release
			return put("first")(tx)
		})
	}()
	<-inside
	go func() { done <- s.Commit(put("exclusive")) }()
	poll.Until(t, time.Minute, "the exclusive call to queue", func() bool { return s.group.pendingCalls() >= 1 })
	go func() { done <- s.CommitShared(put("shared")) }()
	poll.Until(t, time.Minute, "the second shared call to queue", func() bool { return s.group.pendingCalls() >= 2 })
	close(release)
	for range 3 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("a call behind an exclusive one never committed")
		}
	}
	if err := s.View(func(tx kv.Tx) error {
		for _, k := range []string{"first", "exclusive", "shared"} {
			if tx.Bucket([]byte(BucketMeta)).Get([]byte(k)) == nil {
				return fmt.Errorf("%s not written", k)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
