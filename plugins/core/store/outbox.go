package store

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// BucketEventOutbox holds the events of committed writes until they have
// been published and handled downstream: a write records its
// event here in its own transaction, so an acknowledged write's event
// survives the server's death. Key: a stamp (8 bytes, big endian,
// increasing in this process) and the event id; value: an OutboxEvent.
// Like BucketLastProject it is created on open, not by a versioned
// migration: older builds ignore it.
const BucketEventOutbox = "event_outbox"

// OutboxEvent is one recorded event. Its id and time are final: a
// redelivery after a crash carries the same ones, so a subscriber can tell
// it has seen the event.
type OutboxEvent struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Time string          `json:"time"`
	Data json.RawMessage `json:"data"`
	// Owner and Until (unix ms) lease the entry to the drainer publishing
	// it; once Until has passed, any drainer may claim it again.
	Owner string `json:"owner,omitempty"`
	Until int64  `json:"until,omitempty"`
	// Attempts counts the publications that were not handled.
	Attempts int `json:"attempts,omitempty"`
	// Key is the entry's key in BucketEventOutbox.
	Key []byte `json:"-"`
}

// lastStamp makes outbox keys strictly increasing within a process, so
// events of one server drain in the order their writes recorded them.
var lastStamp atomic.Int64

func nextStamp(now time.Time) int64 {
	for {
		last, n := lastStamp.Load(), now.UnixNano()
		if n <= last {
			n = last + 1
		}
		if lastStamp.CompareAndSwap(last, n) {
			return n
		}
	}
}

// RecordEvent records an event in tx, the transaction of the write that
// causes it, with its final id and time. Inside a group commit (Commit)
// while a drainer takes this store's events (TakeEvents), the entry is
// recorded already leased to that drainer and handed to it once the commit
// returns, so publishing it costs no claim transaction (handoff.go).
func (s *Store) RecordEvent(tx kv.Tx, eventType string, data any, now time.Time) (OutboxEvent, error) {
	raw, err := marshalEventData(data)
	if err != nil {
		return OutboxEvent{}, fmt.Errorf("store: event %s data: %w", eventType, err)
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	ev := OutboxEvent{ID: "evt_" + hex.EncodeToString(id[:]), Type: eventType, Time: now.UTC().Format("2006-01-02T15:04:05.000Z"), Data: raw}
	ev.Key = binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(ev.ID)), uint64(nextStamp(now)))
	ev.Key = append(ev.Key, ev.ID...)
	ev = s.leaseFresh(tx, ev)
	return ev, tx.Bucket([]byte(BucketEventOutbox)).Put(ev.Key, marshalOutboxEvent(ev))
}

func putOutbox(tx kv.Tx, ev OutboxEvent) error {
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(BucketEventOutbox)).Put(ev.Key, raw)
}

// claimable reports whether an entry's lease, if any, has lapsed.
func (ev OutboxEvent) claimable(nowMs int64) bool { return ev.Owner == "" || ev.Until <= nowMs }

// walkOutbox calls fn for every entry in key order until fn returns false.
func walkOutbox(tx kv.Tx, fn func(ev OutboxEvent) (bool, error)) error {
	b := tx.Bucket([]byte(BucketEventOutbox))
	if !b.Exists() {
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var ev OutboxEvent
		if err := json.Unmarshal(v, &ev); err != nil {
			return fmt.Errorf("store: outbox entry %x: %w", k, err)
		}
		ev.Key = bytes.Clone(k)
		more, err := fn(ev)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// ClaimEvents leases up to max claimable entries, oldest first, to owner
// until now+lease and returns them. Claims run in a write transaction (on
// PostgreSQL under the area's lock, taken exclusively), so two drainers never hold
// the same entry at once; an entry whose drainer died is claimable again
// once its lease has lapsed. A read goes first, so a drainer that finds
// nothing to claim writes nothing.
func (s *Store) ClaimEvents(owner string, now time.Time, lease time.Duration, max int) ([]OutboxEvent, error) {
	nowMs := now.UnixMilli()
	found := false
	if err := s.View(func(tx kv.Tx) error {
		return walkOutbox(tx, func(ev OutboxEvent) (bool, error) {
			found = ev.claimable(nowMs)
			return !found, nil
		})
	}); err != nil || !found {
		return nil, err
	}
	var claimed []OutboxEvent
	err := s.Update(func(tx kv.Tx) error {
		claimed = claimed[:0]
		var todo []OutboxEvent
		if err := walkOutbox(tx, func(ev OutboxEvent) (bool, error) {
			if ev.claimable(nowMs) {
				todo = append(todo, ev)
			}
			return len(todo) < max, nil
		}); err != nil {
			return err
		}
		for _, ev := range todo {
			ev.Owner, ev.Until = owner, now.Add(lease).UnixMilli()
			if err := putOutbox(tx, ev); err != nil {
				return err
			}
			claimed = append(claimed, ev)
		}
		return nil
	})
	return claimed, err
}

// DoneEvents removes handled entries at once, in a commit of their own.
// An entry already gone (another drainer redelivered and removed it) is no
// error. DoneEventsLater saves that commit.
func (s *Store) DoneEvents(evs []OutboxEvent) error {
	if len(evs) == 0 {
		return nil
	}
	keys := make([][]byte, len(evs))
	for i, ev := range evs {
		keys[i] = ev.Key
	}
	return s.Update(func(tx kv.Tx) error { return removeOutbox(tx, keys) })
}

// removeOutbox deletes the entries under keys; a key already gone is no
// error.
func removeOutbox(tx kv.Tx, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	b := tx.Bucket([]byte(BucketEventOutbox))
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// ReleaseEvents counts a failed attempt on each entry owner published but
// did not see handled, and sets its lease to end at retryAt(attempts), when
// it is claimed again.
func (s *Store) ReleaseEvents(owner string, evs []OutboxEvent, retryAt func(attempts int) time.Time) error {
	if len(evs) == 0 {
		return nil
	}
	return s.Update(func(tx kv.Tx) error {
		b := tx.Bucket([]byte(BucketEventOutbox))
		for _, ev := range evs {
			raw := b.Get(ev.Key)
			if raw == nil {
				continue
			}
			var cur OutboxEvent
			if err := json.Unmarshal(raw, &cur); err != nil {
				return err
			}
			if cur.Owner != owner {
				continue // claimed again by another drainer meanwhile
			}
			cur.Attempts++
			cur.Key, cur.Until = ev.Key, retryAt(cur.Attempts).UnixMilli()
			if err := putOutbox(tx, cur); err != nil {
				return err
			}
		}
		return nil
	})
}

// PendingEvents counts the entries not yet handled, for health and tests.
func (s *Store) PendingEvents() (int, error) {
	n := 0
	err := s.View(func(tx kv.Tx) error {
		if b := tx.Bucket([]byte(BucketEventOutbox)); b.Exists() {
			n = b.Count()
		}
		return nil
	})
	return n, err
}

// ClearEventLeases drops every lease in a store this process holds alone
// (a bbolt file): any lease in it was taken by a process that is gone, so
// what it left pending drains at once instead of when its lease lapses.
func (s *Store) ClearEventLeases() error {
	if s.bolt == nil {
		return nil // shared: leases of live servers must stand
	}
	var leased []OutboxEvent
	if err := s.View(func(tx kv.Tx) error {
		return walkOutbox(tx, func(ev OutboxEvent) (bool, error) {
			if ev.Owner != "" {
				leased = append(leased, ev)
			}
			return true, nil
		})
	}); err != nil || len(leased) == 0 {
		return err
	}
	return s.Update(func(tx kv.Tx) error {
		for _, ev := range leased {
			ev.Owner, ev.Until = "", 0
			if err := putOutbox(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}
