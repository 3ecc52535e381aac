package engine

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// The state document's event outbox. A write records the events
// it causes in the document, in the same atomic replace as the change, each
// with its final id and time; the drainer (drainer.go) publishes them and
// removes those handled downstream with a later replace. A write whose
// process dies before publishing therefore still has its events, and the
// next process (or, on PostgreSQL, any server) publishes them under the
// same ids, which subscribers use to recognise a redelivery.
const (
	// MaxPendingEvents bounds the events waiting in the document. Past it
	// the oldest are shed (and counted): a write is never refused because
	// subscribers stopped acknowledging, the state change matters more
	// than its notification.
	MaxPendingEvents = 1000
	// MaxPendingEventBytes bounds the waiting events' encoded size, so
	// they cannot crowd values out of the document (MaxStateBytes does not
	// count them).
	MaxPendingEventBytes = 2 << 20
)

// Event is a domain event as recorded in the outbox. ID and Time are final:
// every publication of the event carries them.
type Event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Time string          `json:"time"`
	Data json.RawMessage `json:"data"`
}

// PublishFunc hands one recorded event downstream without waiting; done
// hears nil once it has been handled there, or why it must be published
// again. done may run on any goroutine and must not block. An error means
// the event was not handed over at all.
type PublishFunc func(ev Event, done func(error)) error

// pendingLimit and pendingByteLimit are MaxPendingEvents and
// MaxPendingEventBytes; tests lower them to reach them quickly.
var (
	pendingLimit     = MaxPendingEvents
	pendingByteLimit = MaxPendingEventBytes
)

// newEventID returns a random event id, in the form core's outbox uses.
func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}

// size approximates ev's share of the encoded document.
func (ev Event) size() int { return len(ev.ID) + len(ev.Type) + len(ev.Time) + len(ev.Data) + 40 }

// outboxSize is the approximate encoded size of evs.
func outboxSize(evs []Event) int {
	n := 0
	for _, ev := range evs {
		n += ev.size()
	}
	return n
}

// recordEvents appends raw events, as emitted by a write at now, to s's
// outbox and returns them as recorded.
func recordEvents(s *state, raw []event, now time.Time) ([]Event, error) {
	out := make([]Event, 0, len(raw))
	for _, r := range raw {
		data, err := json.Marshal(r.data)
		if err != nil {
			return nil, err
		}
		out = append(out, Event{ID: newEventID(), Type: r.typ, Time: iso(now), Data: data})
	}
	s.Outbox = append(s.Outbox, out...)
	return out, nil
}

// dropHandled removes the events whose ids are in handled from s's outbox
// and reports whether any was there.
func dropHandled(s *state, handled map[string]bool) bool {
	if len(handled) == 0 {
		return false
	}
	kept := s.Outbox[:0:0]
	for _, ev := range s.Outbox {
		if !handled[ev.ID] {
			kept = append(kept, ev)
		}
	}
	if len(kept) == len(s.Outbox) {
		return false
	}
	s.Outbox = kept
	return true
}

// shedOldest keeps s's outbox within pendingLimit and pendingByteLimit by dropping its oldest events, counted in
// s.EventsShed.
func shedOldest(s *state) {
	drop, size := 0, outboxSize(s.Outbox)
	for drop < len(s.Outbox) && (len(s.Outbox)-drop > pendingLimit || size > pendingByteLimit) {
		size -= s.Outbox[drop].size()
		drop++
	}
	if drop == 0 {
		return
	}
	s.Outbox = append([]Event(nil), s.Outbox[drop:]...)
	s.EventsShed += int64(drop)
}
