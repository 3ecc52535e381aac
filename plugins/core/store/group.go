package store

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// Group commit: every durable commit costs an fsync (bbolt's, or
// PostgreSQL's WAL flush plus a round of the core lock), so concurrent
// appends (eight agents recording thoughts at once) would queue for one
// commit each. Commit gathers the calls that arrive while a commit is in
// flight and runs them together in the next transaction, one commit for all.
// Calls arriving while that transaction is being built join it, and under
// load it lingers briefly for the calls it expects (linger.go). Unlike
// bbolt's Batch a lone caller never waits for company: it commits at once.

type groupCall struct {
	fn   func(tx kv.Tx) error
	done chan error
	// shared marks a call fit for a shared update (CommitShared).
	shared bool
}

type group struct {
	mu      sync.Mutex
	pending []*groupCall
	running bool
	// arrived wakes a committer lingering for company (linger.go).
	arrived chan struct{}
	timer   *time.Timer
	// peak is the largest batch committed in the current window of
	// commits, prevPeak that of the window before.
	peak, prevPeak, commits int
	// lingerMax overrides the const of that name (tests).
	lingerMax time.Duration
}

// Commit runs fn in a durable read-write transaction, possibly shared with
// other Commit calls made at the same time. fn's error is returned to its
// caller only; the calls sharing the transaction still commit.
//
// Contract: fn must decide to fail before it writes anything. A failing fn's
// writes cannot be undone without undoing its neighbours' too, so Commit
// rolls the whole transaction back and re-runs the others without it; a fn
// that wrote before failing would have its writes discarded with the rest,
// which is correct, but at the price of that re-run.
func (s *Store) Commit(fn func(tx kv.Tx) error) error {
	return s.commit(&groupCall{fn: fn, done: make(chan error, 1)})
}

// CommitShared is Commit for a write that, on PostgreSQL, may run beside
// other servers' writes (docs/decisions.md D40): one whose rows every
// write would change are counters (NextID), totals under tx.Shard, or
// written only after tx.Alone, and which deletes no row another shared
// write may write again from an earlier read (PostgreSQL reports no
// conflict for that). A transaction whose calls are all shared runs as a
// shared update; any other call in it makes it exclusive. fn may run more
// than once; only its last run counts.
func (s *Store) CommitShared(fn func(tx kv.Tx) error) error {
	return s.commit(&groupCall{fn: fn, done: make(chan error, 1), shared: true})
}

func (s *Store) commit(c *groupCall) error {
	g := &s.group
	g.mu.Lock()
	g.pending = append(g.pending, c)
	if g.running {
		g.wake()
		g.mu.Unlock()
		return <-c.done
	}
	g.running = true
	g.mu.Unlock()
	// This caller becomes the committer until the queue is empty; its own
	// call is in the first batch, but it keeps committing for later arrivals
	// so no call waits for a committer that has left.
	for {
		g.mu.Lock()
		batch := g.pending
		g.pending = nil
		if len(batch) == 0 {
			g.running = false
			g.mu.Unlock()
			break
		}
		g.mu.Unlock()
		s.commitBatch(batch)
	}
	return <-c.done
}

// maxBatch bounds the calls one transaction takes in, so that a stream of
// arrivals cannot keep a transaction open (and its first callers waiting)
// indefinitely.
const maxBatch = 256

// join appends to batch the calls pending now, up to maxBatch in all; a
// shared batch takes the shared calls at the head of the queue only.
func (g *group) join(batch []*groupCall, shared bool) []*groupCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := min(len(g.pending), maxBatch-len(batch))
	if shared {
		for i, c := range g.pending[:max(n, 0)] {
			if !c.shared {
				n = i
				break
			}
		}
	}
	if n <= 0 {
		return batch
	}
	batch = append(batch, g.pending[:n]...)
	g.pending = append(g.pending[:0], g.pending[n:]...)
	return batch
}

func allShared(batch []*groupCall) bool {
	for _, c := range batch {
		if !c.shared {
			return false
		}
	}
	return true
}

// errRetry marks a transaction rolled back because one of its calls failed.
var errRetry = errors.New("store: batch member failed")

func (s *Store) commitBatch(batch []*groupCall) {
	// Handled outbox entries leave with this transaction (handoff.go).
	handled := s.takeHandled()
	var until time.Time // the end of lingering, once it started
	for len(batch) > 0 {
		var (
			failed        int
			failErr       error
			removalFailed bool
		)
		// On PostgreSQL the transaction may run more than once (a shared
		// update that conflicted, or asked to run alone): each run starts
		// afresh. A shared transaction takes in shared calls only (join);
		// on bbolt, where nothing runs beside a transaction, any call.
		shared := s.pg != nil && allShared(batch)
		err := s.update(shared, func(tx kv.Tx) error {
			failed, failErr, removalFailed = -1, nil, false
			s.beginFresh(tx)
			if err := removeOutbox(tx, handled); err != nil {
				removalFailed = true
				return err
			}
			for i := 0; ; i++ {
				// Calls that arrived while this transaction was being built
				// join it rather than wait for a commit of their own: the
				// commit (spill, two fsyncs) is most of a write's cost, and
				// a bigger batch shares it wider.
				for i == len(batch) {
					if batch = s.group.join(batch, shared); i < len(batch) {
						break
					}
					if !s.group.linger(len(batch), &until, shared) {
						return nil
					}
				}
				if err := safeRun(batch[i].fn, tx); err != nil {
					failed, failErr = i, err
					return errRetry
				}
			}
		})
		taker, fresh := s.endFresh()
		switch {
		case removalFailed:
			// The writes must not fail for the sake of cleanup: they run
			// again alone, and the removals wait for a later commit.
			s.restoreHandled(handled)
			handled = nil
		case failed >= 0:
			// Answer the failing call and retry the rest without it. Its
			// error is what it saw after the calls before it, all of which
			// will commit, so the answer stays true.
			batch[failed].done <- failErr
			batch = append(batch[:failed:failed], batch[failed+1:]...)
		default:
			if err == nil {
				s.group.committed(len(batch))
			}
			for _, c := range batch {
				c.done <- err
			}
			if err != nil {
				s.restoreHandled(handled)
			} else if len(fresh) > 0 {
				taker.Take(fresh)
			}
			return
		}
	}
	s.restoreHandled(handled) // every call failed: nothing committed
}

// safeRun turns a panic in fn into an error so that one bad call cannot take
// down the committer and leave its neighbours waiting forever.
func safeRun(fn func(tx kv.Tx) error, tx kv.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError{r}
		}
	}()
	return fn(tx)
}

type panicError struct{ v any }

func (p panicError) Error() string { return fmt.Sprintf("store: commit function panicked: %v", p.v) }
