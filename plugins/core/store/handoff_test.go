package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// taker collects what the store hands it.
type taker struct {
	mu  sync.Mutex
	got []OutboxEvent
}

func (k *taker) take(evs []OutboxEvent) {
	k.mu.Lock()
	k.got = append(k.got, evs...)
	k.mu.Unlock()
}

func (k *taker) taken() []OutboxEvent {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]OutboxEvent(nil), k.got...)
}

func takeEvents(t *testing.T, s *Store, k *taker) {
	t.Helper()
	stop := s.TakeEvents(&EventTaker{Owner: "me", Lease: time.Minute, Now: time.Now, Take: k.take})
	t.Cleanup(stop)
}

func recordIn(s *Store, name string) error {
	return s.Commit(func(tx kv.Tx) error {
		_, err := s.RecordEvent(tx, "task.created", map[string]any{"n": name}, time.Now())
		return err
	})
}

func pendingIn(t *testing.T, s *Store) int {
	t.Helper()
	n, err := s.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A group commit's event is leased to the taker in the write's own
// transaction and handed over once it commits: one commit, no claim.
func TestGroupCommitHandsItsEvents(t *testing.T) { pgtest.EachStore(t, testGroupCommitHandsItsEvents) }

func testGroupCommitHandsItsEvents(t *testing.T) {
	s, _ := openEach(t)
	var k taker
	takeEvents(t, s, &k)
	before := s.Commits()
	if err := recordIn(s, "a"); err != nil {
		t.Fatal(err)
	}
	if n := s.Commits() - before; n != 1 {
		t.Fatalf("a write with its event cost %d commits, want 1", n)
	}
	got := k.taken()
	if len(got) != 1 || string(got[0].Data) != `{"n":"a"}` || got[0].Owner != "me" {
		t.Fatalf("handed %+v, want the one event leased to me", got)
	}
	if evs, err := s.ClaimEvents("other", time.Now(), time.Minute, 10); err != nil || len(evs) != 0 {
		t.Fatalf("another drainer claimed %d (%v) entries under a live lease", len(evs), err)
	}
	if n := pendingIn(t, s); n != 1 {
		t.Fatalf("%d entries pending, want the handed one until it is handled", n)
	}
}

// A batch member that fails hands nothing; its neighbours' events are
// handed once, from the transaction that committed.
func TestGroupCommitHandsOnlyCommittedEvents(t *testing.T) {
	pgtest.EachStore(t, testGroupCommitHandsOnlyCommittedEvents)
}

func testGroupCommitHandsOnlyCommittedEvents(t *testing.T) {
	s, _ := openEach(t)
	var k taker
	takeEvents(t, s, &k)
	const n = 24
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_ = s.Commit(func(tx kv.Tx) error {
				if _, err := s.RecordEvent(tx, "task.created", map[string]any{"n": i}, time.Now()); err != nil {
					return err
				}
				if i%4 == 3 {
					return errors.New("refused after recording")
				}
				return nil
			})
		}(i)
	}
	wg.Wait()
	got := k.taken()
	seen := map[string]bool{}
	for _, ev := range got {
		if seen[ev.ID] {
			t.Fatalf("event %s handed twice", ev.ID)
		}
		seen[ev.ID] = true
		var i int
		if _, err := fmt.Sscanf(string(ev.Data), `{"n":%d}`, &i); err != nil || i%4 == 3 {
			t.Fatalf("handed %s, the event of a failed call", ev.Data)
		}
	}
	if len(got) != n-n/4 || pendingIn(t, s) != len(got) {
		t.Fatalf("handed %d, pending %d; want %d each", len(got), pendingIn(t, s), n-n/4)
	}
}

// Without a taker, or outside a group commit, an event is recorded
// unleased for ClaimEvents, as before.
func TestEventsOutsideTheHandoffStayClaimable(t *testing.T) {
	pgtest.EachStore(t, testEventsOutsideTheHandoffStayClaimable)
}

func testEventsOutsideTheHandoffStayClaimable(t *testing.T) {
	s, _ := openEach(t)
	if err := recordIn(s, "no taker"); err != nil {
		t.Fatal(err)
	}
	var k taker
	takeEvents(t, s, &k)
	if err := s.Update(func(tx kv.Tx) error {
		_, err := s.RecordEvent(tx, "task.created", map[string]any{"n": "update"}, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := k.taken(); len(got) != 0 {
		t.Fatalf("handed %d events that no group commit recorded", len(got))
	}
	evs, err := s.ClaimEvents("other", time.Now(), time.Minute, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("claimed %d (%v), want both unleased entries", len(evs), err)
	}
}

// Handled entries leave inside the next write's commit, costing no commit
// of their own. The removal delay is an hour, so a loaded machine running
// this slowly cannot give them a commit of their own first
// (docs/decisions.md D42).
func TestHandledEventsLeaveWithTheNextCommit(t *testing.T) {
	pgtest.EachStore(t, testHandledEventsLeaveWithTheNextCommit)
}

func testHandledEventsLeaveWithTheNextCommit(t *testing.T) {
	s, _ := openEach(t)
	var k taker
	t.Cleanup(s.TakeEvents(&EventTaker{Owner: "me", Lease: time.Minute, Now: time.Now, Take: k.take, RemovalDelay: time.Hour}))
	if err := recordIn(s, "a"); err != nil {
		t.Fatal(err)
	}
	s.DoneEventsLater(k.taken())
	if n := pendingIn(t, s); n != 1 {
		t.Fatalf("%d entries pending before the next commit, want the handled one", n)
	}
	before := s.Commits()
	if err := s.Commit(func(tx kv.Tx) error {
		return tx.Bucket([]byte(BucketMeta)).Put([]byte("unrelated"), []byte{1})
	}); err != nil {
		t.Fatal(err)
	}
	if n := s.Commits() - before; n != 1 {
		t.Fatalf("the write and the removal cost %d commits, want 1", n)
	}
	if n := pendingIn(t, s); n != 0 {
		t.Fatalf("%d entries left after the next commit", n)
	}
}

// With no write, handled entries leave after the removal delay in one
// commit of their own; an entry already gone does no harm.
func TestHandledEventsLeaveAloneWithoutAWrite(t *testing.T) {
	pgtest.EachStore(t, testHandledEventsLeaveAloneWithoutAWrite)
}

func testHandledEventsLeaveAloneWithoutAWrite(t *testing.T) {
	s, _ := openEach(t)
	var k taker
	t.Cleanup(s.TakeEvents(&EventTaker{Owner: "me", Lease: time.Minute, Now: time.Now, Take: k.take, RemovalDelay: 10 * time.Millisecond}))
	for _, name := range []string{"a", "b"} {
		if err := recordIn(s, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DoneEvents(k.taken()[:1]); err != nil {
		t.Fatal(err)
	}
	before := s.Commits()
	// One call, so one removal: "a" is already gone.
	s.DoneEventsLater(k.taken())
	if !poll.Within(time.Minute, func() bool { return pendingIn(t, s) == 0 && s.Commits() != before }) {
		t.Fatal("a handled entry stayed without a further write")
	}
	if n := s.Commits() - before; n != 1 {
		t.Fatalf("the removal alone cost %d commits, want 1", n)
	}
}

// A taker that dies before its events are handled leaves them leased: no
// one claims them under the lease, anyone after it (and on bbolt at once
// after ClearEventLeases, what the next start does), under their ids.
func TestHandedEventsOfADeadTakerAreClaimedAfterTheLease(t *testing.T) {
	pgtest.EachStore(t, testHandedEventsOfADeadTakerAreClaimedAfterTheLease)
}

func testHandedEventsOfADeadTakerAreClaimedAfterTheLease(t *testing.T) {
	s, _ := openEach(t)
	var k taker
	stop := s.TakeEvents(&EventTaker{Owner: "dead", Lease: time.Minute, Now: time.Now, Take: k.take})
	for i := 0; i < 3; i++ {
		if err := recordIn(s, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	stop() // the drainer died without hearing them handled
	lost := k.taken()
	if evs, err := s.ClaimEvents("next", time.Now(), time.Minute, 10); err != nil || len(evs) != 0 {
		t.Fatalf("claimed %d (%v) under a live lease", len(evs), err)
	}
	evs, err := s.ClaimEvents("next", time.Now().Add(time.Minute+time.Second), time.Minute, 10)
	if err != nil || len(evs) != 3 {
		t.Fatalf("claimed %d (%v) after the lease, want 3", len(evs), err)
	}
	for i, ev := range evs {
		if ev.ID != lost[i].ID {
			t.Fatalf("entry %d claimed as %s, handed as %s", i, ev.ID, lost[i].ID)
		}
	}
	if s.bolt != nil {
		if err := s.ClearEventLeases(); err != nil {
			t.Fatal(err)
		}
		if evs, err := s.ClaimEvents("restart", time.Now(), time.Minute, 10); err != nil || len(evs) != 3 {
			t.Fatalf("after clearing leases claimed %d (%v), want 3", len(evs), err)
		}
	}
}
