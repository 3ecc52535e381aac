package store

import (
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// Handing fresh events to this process's drainer. A claim
// transaction per drain and a removal transaction per acknowledgement
// would cost every batch of writes three durable commits instead of one.
// So an event a group commit records is written already leased to the
// drainer that registered with TakeEvents and handed to it in memory once
// the commit returns; the drainer reports it handled with DoneEventsLater,
// and the entry leaves inside the next group commit (or, when no write
// comes within the drainer's removal delay, in a commit of its own). Crash
// safety is that of a claim: a dead drainer's lease lapses (on bbolt Run
// clears it at the next start), and the entry is claimed and published
// again under its id.

// DefaultRemovalDelay is how long handled entries wait for a write's
// commit to remove them before they get one of their own.
const DefaultRemovalDelay = 150 * time.Millisecond

// EventTaker is the drainer that takes the events group commits record.
type EventTaker struct {
	// Owner and Lease lease each entry as a claim would; Now is the
	// drainer's clock.
	Owner string
	Lease time.Duration
	Now   func() time.Time
	// Take receives the entries of each committed group commit, in the
	// order they were recorded, on the committing goroutine after the
	// callers had their answers; it must not block.
	Take func([]OutboxEvent)
	// RemovalDelay is how long the entries it reports handled wait for a
	// write's commit before they get one of their own; 0 means
	// DefaultRemovalDelay.
	RemovalDelay time.Duration
}

type outboxState struct {
	mu    sync.Mutex
	taker *EventTaker
	// The group commit transaction running now, the taker it leases to
	// (nil: record unleased) and the entries recorded in it so far.
	tx      kv.Tx
	txTaker *EventTaker
	fresh   []OutboxEvent
	// handled entries' keys awaiting removal, and the timer that gives
	// them a commit of their own.
	handled [][]byte
	timer   *time.Timer
	// delay is the last taker's RemovalDelay (0: DefaultRemovalDelay); it
	// outlives the taker, whose handled entries still wait for removal.
	delay  time.Duration
	closed bool
}

// TakeEvents makes t the taker of the events later group commits record,
// until the returned stop is called; without a taker events are recorded
// unleased, for ClaimEvents.
func (s *Store) TakeEvents(t *EventTaker) (stop func()) {
	s.outbox.mu.Lock()
	s.outbox.taker, s.outbox.delay = t, t.RemovalDelay
	s.outbox.mu.Unlock()
	return func() {
		s.outbox.mu.Lock()
		if s.outbox.taker == t {
			s.outbox.taker = nil
		}
		s.outbox.mu.Unlock()
	}
}

// beginFresh starts collecting the events recorded in tx, a group commit's
// transaction (a re-run of a batch starts again from nothing).
func (s *Store) beginFresh(tx kv.Tx) {
	o := &s.outbox
	o.mu.Lock()
	o.tx, o.txTaker, o.fresh = tx, o.taker, nil
	o.mu.Unlock()
}

// endFresh ends the transaction begun by beginFresh and returns what was
// recorded in it and who takes it.
func (s *Store) endFresh() (*EventTaker, []OutboxEvent) {
	o := &s.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	t, evs := o.txTaker, o.fresh
	o.tx, o.txTaker, o.fresh = kv.Tx{}, nil, nil
	return t, evs
}

// leaseFresh leases ev to the taker when tx is the running group commit's
// transaction, and remembers it for the handoff.
func (s *Store) leaseFresh(tx kv.Tx, ev OutboxEvent) OutboxEvent {
	o := &s.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.txTaker == nil || o.tx != tx {
		return ev
	}
	ev.Owner, ev.Until = o.txTaker.Owner, o.txTaker.Now().Add(o.txTaker.Lease).UnixMilli()
	o.fresh = append(o.fresh, ev)
	return ev
}

// DoneEventsLater removes handled entries with the next commit: a group
// commit's transaction deletes them first, or, when none comes within the
// taker's RemovalDelay, a commit of their own. Until then they stay
// leased, so no drainer publishes them again; a crash meanwhile redelivers
// them under their ids, as after any crash before removal.
func (s *Store) DoneEventsLater(evs []OutboxEvent) {
	if len(evs) == 0 {
		return
	}
	o := &s.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	for _, ev := range evs {
		o.handled = append(o.handled, ev.Key)
	}
	s.armRemovalLocked()
}

func (s *Store) armRemovalLocked() {
	if s.outbox.timer == nil && !s.outbox.closed {
		delay := s.outbox.delay
		if delay <= 0 {
			delay = DefaultRemovalDelay
		}
		s.outbox.timer = time.AfterFunc(delay, s.removeHandledAlone)
	}
}

// removeHandledAlone gives waiting removals a commit: an empty group
// commit call, whose transaction deletes them as any batch's does.
func (s *Store) removeHandledAlone() {
	o := &s.outbox
	o.mu.Lock()
	o.timer = nil
	waiting := len(o.handled) > 0 && !o.closed
	o.mu.Unlock()
	if waiting {
		_ = s.Commit(func(kv.Tx) error { return nil })
	}
}

// takeHandled hands the waiting removals to a commit about to start.
func (s *Store) takeHandled() [][]byte {
	o := &s.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := o.handled
	o.handled = nil
	return keys
}

// restoreHandled puts back removals whose commit failed; they wait for
// the next one.
func (s *Store) restoreHandled(keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	o := &s.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handled = append(keys, o.handled...)
	s.armRemovalLocked()
}

// removeHandledNow removes the waiting entries before the store closes,
// and stops taking more.
func (s *Store) removeHandledNow() {
	o := &s.outbox
	o.mu.Lock()
	o.closed = true
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	keys := o.handled
	o.handled = nil
	o.mu.Unlock()
	if len(keys) > 0 {
		_ = s.Update(func(tx kv.Tx) error { return removeOutbox(tx, keys) })
	}
}
