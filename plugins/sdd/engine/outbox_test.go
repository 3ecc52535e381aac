package engine

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// sink is a downstream that records every publication and answers it as
// told: handled (nil), not handled (an error) or never (hold).
type sink struct {
	mu     sync.Mutex
	got    []Event
	hold   bool
	fail   error
	refuse error // returned by publish itself: no host
}

func (s *sink) publish(ev Event, done func(error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse != nil {
		return s.refuse
	}
	s.got = append(s.got, ev)
	if s.hold {
		return nil
	}
	go done(s.fail)
	return nil
}

func (s *sink) events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.got...)
}

func (s *sink) set(f func(s *sink)) {
	s.mu.Lock()
	f(s)
	s.mu.Unlock()
}

// shorten makes the drainer's pauses test-sized for the test.
func shorten(t *testing.T) {
	t.Helper()
	old := [5]time.Duration{retryBase, retryMax, removeDelay, foreignGrace, pollEvery}
	retryBase, retryMax, removeDelay, foreignGrace, pollEvery = 20*time.Millisecond, 100*time.Millisecond, 20*time.Millisecond, 100*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() {
		retryBase, retryMax, removeDelay, foreignGrace, pollEvery = old[0], old[1], old[2], old[3], old[4]
	})
}

// openWith opens an engine on root (and, on PostgreSQL, the test's
// database) publishing to out.
func openWith(t *testing.T, root string, out *sink) *Engine {
	t.Helper()
	e, err := New(Config{Root: root, Publish: out.publish, Store: os.Getenv(pgtest.StoreEnv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if _, err := e.Initialize(); err != nil {
		t.Fatal(err)
	}
	return e
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	poll.Until(t, time.Minute, what, f)
}

func pendingIn(t *testing.T, e *Engine) (int, int64) {
	t.Helper()
	n, shed, err := e.PendingEvents()
	if err != nil {
		t.Fatal(err)
	}
	return n, shed
}

// An event whose publication was never acknowledged outlives its engine
// (a crash between the write and the host's answer) and the next engine
// publishes it under the same id, time and data; once handled it leaves
// the state and a third engine publishes nothing.
func TestUnhandledEventSurvivesReopen(t *testing.T) {
	pgtest.EachStore(t, testUnhandledEventSurvivesReopen)
}

func testUnhandledEventSurvivesReopen(t *testing.T) {
	shorten(t)
	root := t.TempDir()
	first := &sink{hold: true}
	a := openWith(t, root, first)
	lease, err := a.CreateLease("T-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := first.events()
	if len(sent) != 1 || sent[0].Type != EventLeaseIssued || !strings.HasPrefix(sent[0].ID, "evt_") {
		t.Fatalf("published at the write: %+v", sent)
	}
	if n, _ := pendingIn(t, a); n != 1 {
		t.Fatalf("%d events pending after an unacknowledged publication, want 1", n)
	}
	a.Close()

	second := &sink{}
	b := openWith(t, root, second)
	waitFor(t, "the next engine to publish the pending event", func() bool { return len(second.events()) >= 1 })
	got := second.events()[0]
	if got.ID != sent[0].ID || got.Time != sent[0].Time || string(got.Data) != string(sent[0].Data) || got.Type != sent[0].Type {
		t.Fatalf("republished %+v, want the recorded %+v", got, sent[0])
	}
	if !strings.Contains(string(got.Data), `"leaseId":"`+lease.LeaseID+`"`) {
		t.Fatalf("event data %s does not name lease %s", got.Data, lease.LeaseID)
	}
	waitFor(t, "the handled event to leave the state", func() bool { n, _ := pendingIn(t, b); return n == 0 })
	b.Close()
	if n := len(second.events()); n != 1 {
		t.Fatalf("published %d times by the second engine, want 1", n)
	}

	third := &sink{}
	openWith(t, root, third)
	// Nothing must arrive: the only wait for an absence is a window past
	// the grace after which a pending event would have been published.
	time.Sleep(3 * foreignGrace)
	if n := len(third.events()); n != 0 {
		t.Fatalf("a handled event was published again: %+v", third.events())
	}
}

// A handled event leaves the state; under a stream of writes the next
// write takes it out (no replace of its own), and an event that was not
// handled is published again under its id until it is.
func TestHandledEventsLeaveAndUnhandledRetry(t *testing.T) {
	pgtest.EachStore(t, testHandledEventsLeaveAndUnhandledRetry)
}

func testHandledEventsLeaveAndUnhandledRetry(t *testing.T) {
	shorten(t)
	removeDelay = time.Hour // only a write removes handled events
	out := &sink{}
	e := openWith(t, t.TempDir(), out)
	if _, err := e.CreateLease("T-1", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first event handled", func() bool {
		e.drain.mu.Lock()
		defer e.drain.mu.Unlock()
		return len(e.drain.handled) == 1
	})
	if _, err := e.CreateLease("T-2", nil); err != nil {
		t.Fatal(err)
	}
	outbox, err := e.pendingOutbox()
	if err != nil {
		t.Fatal(err)
	}
	if len(outbox) > 1 || (len(outbox) == 1 && outbox[0].ID != out.events()[1].ID) {
		t.Fatalf("after the second write the state holds %+v; the first, handled, event should be gone", outbox)
	}

	out.set(func(s *sink) { s.fail = errors.New("a subscriber failed") })
	if _, err := e.CreateLease("T-3", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three attempts of the failing event", func() bool { return len(out.events()) >= 5 })
	out.set(func(s *sink) { s.fail = nil })
	third := out.events()[2]
	waitFor(t, "the failing event handled at last", func() bool {
		e.drain.mu.Lock()
		defer e.drain.mu.Unlock()
		return e.drain.handled[third.ID]
	})
	for _, ev := range out.events()[3:] {
		if ev.ID != third.ID || ev.Time != third.Time || string(ev.Data) != string(third.Data) {
			t.Fatalf("a retry of %+v carried %+v", third, ev)
		}
	}
	if _, err := e.CreateLease("T-4", nil); err != nil {
		t.Fatal(err)
	}
	if outbox, _ := e.pendingOutbox(); len(outbox) > 1 || (len(outbox) == 1 && outbox[0].ID == third.ID) {
		t.Fatalf("after the fourth write the state holds %+v", outbox)
	}
}

// With no host to hand events to, writes still succeed; the outbox keeps
// the newest MaxPendingEvents and counts what it shed; when the host is
// back the kept ones are published oldest first.
func TestPendingEventsBounded(t *testing.T) { pgtest.EachStore(t, testPendingEventsBounded) }

func testPendingEventsBounded(t *testing.T) {
	shorten(t)
	defer func(n int) { pendingLimit = n }(pendingLimit)
	pendingLimit = 20
	out := &sink{refuse: errors.New("plugin is not connected to a host")}
	e := openWith(t, t.TempDir(), out)
	const extra = 5
	for i := range pendingLimit + extra {
		if _, err := e.CreateLease(fmt.Sprintf("T-%d", i), nil); err != nil {
			t.Fatalf("write %d refused: %v", i, err)
		}
	}
	n, shed := pendingIn(t, e)
	if n != pendingLimit || shed != extra {
		t.Fatalf("%d pending, %d shed; want %d and %d", n, shed, pendingLimit, extra)
	}
	out.set(func(s *sink) { s.refuse = nil })
	waitFor(t, "the kept events published", func() bool { return len(out.events()) >= pendingLimit })
	for i, ev := range out.events() {
		if !strings.Contains(string(ev.Data), fmt.Sprintf(`"taskId":"T-%d"`, extra+i)) {
			for _, e := range out.events() {
				t.Log(string(e.Data))
			}
			t.Fatalf("published event %d: %s; want the kept ones oldest first (T-%d)", i, ev.Data, extra+i)
		}
	}
	waitFor(t, "the outbox emptied", func() bool { n, _ := pendingIn(t, e); return n == 0 })
}

// shedOldest keeps both bounds and drops oldest first.
func TestShedOldest(t *testing.T) {
	t.Parallel()
	big := Event{ID: "evt_big", Data: []byte(`"` + strings.Repeat("x", MaxPendingEventBytes/4) + `"`)}
	small := func(i int) Event { return Event{ID: fmt.Sprintf("evt_%d", i), Data: []byte(`{}`)} }
	many := func(n int) []Event {
		out := make([]Event, n)
		for i := range out {
			out[i] = small(i)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		in        []Event
		wantLen   int
		wantShed  int64
		wantFirst string
	}{
		{"under both bounds", many(3), 3, 0, "evt_0"},
		{"count bound", many(MaxPendingEvents + 2), MaxPendingEvents, 2, "evt_2"},
		{"byte bound", []Event{big, big, big, big, big, small(9)}, 4, 2, "evt_big"},
		{"one event over the byte bound", []Event{{ID: "evt_huge", Data: make([]byte, MaxPendingEventBytes+1)}}, 0, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &state{Outbox: tc.in}
			shedOldest(s)
			if len(s.Outbox) != tc.wantLen || s.EventsShed != tc.wantShed {
				t.Fatalf("kept %d, shed %d; want %d and %d", len(s.Outbox), s.EventsShed, tc.wantLen, tc.wantShed)
			}
			if tc.wantLen > 0 && s.Outbox[0].ID != tc.wantFirst {
				t.Fatalf("first kept %s, want %s", s.Outbox[0].ID, tc.wantFirst)
			}
			if outboxSize(s.Outbox) > MaxPendingEventBytes {
				t.Fatalf("kept %d bytes", outboxSize(s.Outbox))
			}
		})
	}
}

// On PostgreSQL any server drains: an event another, dead, server recorded
// and never saw handled is published by a live one once it has waited its
// grace, and leaves the shared document.
func TestOtherServerDrainsOnPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	t.Setenv(pgtest.StoreEnv, dsn)
	shorten(t)
	live := &sink{}
	b := openWith(t, t.TempDir(), live)
	dead := &sink{hold: true}
	a := openWith(t, t.TempDir(), dead)
	if _, err := a.CreateLease("T-1", nil); err != nil {
		t.Fatal(err)
	}
	recorded := dead.events()[0]
	start := time.Now()
	waitFor(t, "the live server to publish the dead one's event", func() bool { return len(live.events()) == 1 })
	if waited := time.Since(start); waited < foreignGrace/2 {
		t.Fatalf("published after %v, before its grace of %v", waited, foreignGrace)
	}
	if got := live.events()[0]; got.ID != recorded.ID {
		t.Fatalf("published %s, want %s", got.ID, recorded.ID)
	}
	waitFor(t, "the event to leave the shared document", func() bool { n, _ := pendingIn(t, b); return n == 0 })
}

// A downstream that never handles an event gets it again after pauses
// that double up to retryMax, not in a loop: however slowly a loaded
// machine runs (docs/decisions.md D42), 30 attempts take at least the
// schedule's time, since each pause is a lower bound.
func TestFailingDownstreamIsNoHotLoop(t *testing.T) {
	pgtest.EachStore(t, testFailingDownstreamIsNoHotLoop)
}

func testFailingDownstreamIsNoHotLoop(t *testing.T) {
	shorten(t)
	out := &sink{fail: errors.New("a subscriber failed")}
	e := openWith(t, t.TempDir(), out)
	start := time.Now()
	if _, err := e.CreateLease("T-1", nil); err != nil {
		t.Fatal(err)
	}
	const want = 30
	if !poll.Within(2*time.Minute, func() bool { return len(out.events()) >= want }) {
		t.Fatalf("%d publications of a failing event in 2 minutes; the retries stopped", len(out.events()))
	}
	// Attempts at 0, 20, 60 and 140 ms, then at least retryMax apart: by
	// then at most 5 + elapsed/retryMax (a hot loop makes 30 in a few ms).
	n := len(out.events())
	if elapsed := time.Since(start); n > 5+int(elapsed/retryMax) {
		t.Fatalf("%d publications of a failing event in %v; the backoff allows at most %d", n, elapsed, 5+int(elapsed/retryMax))
	}
	if n, _ := pendingIn(t, e); n != 1 {
		t.Fatalf("%d events pending, want the failing one", n)
	}
}
