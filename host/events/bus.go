// Package events is the host's event bus (docs/decisions.md D19): plugins publish
// through the host services, the bus stamps each event and fans it out to
// subscribers without ever blocking the publisher.
package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Event is one message on the bus.
type Event struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Source string          `json:"source"`
	Time   string          `json:"time"`
	Data   json.RawMessage `json:"data"`
	// Origin names the cluster server an event came from; empty for an
	// event published on this server.
	Origin string `json:"origin,omitempty"`
}

// Handler receives events. It runs on the subscriber's own goroutine, so a
// slow handler delays only its own queue.
type Handler func(Event)

// QueueSize bounds each subscriber's backlog; beyond it events are dropped
// (and counted) rather than stalling publishers.
const QueueSize = 1024

type subscriber struct {
	id       uint64
	name     string
	patterns []string
	// local subscribers (plugins) hear only events published on this
	// server: every server's plugins share one store, so a side effect of
	// an event must happen on one server only.
	local bool
	ch    chan delivery
	done  chan struct{}
}

// delivery is one event in a subscriber's queue; wait, when set, is told
// once the handler has returned.
type delivery struct {
	ev   Event
	wait *handled
}

// matches reports whether any of the subscriber's patterns matches, so an
// event is queued once however many of them overlap.
func (s *subscriber) matches(eventType string) bool {
	for _, p := range s.patterns {
		if seam.MatchEventType(p, eventType) {
			return true
		}
	}
	return false
}

// Bus fans events out to subscribers.
type Bus struct {
	log       hclog.Logger
	mu        sync.RWMutex
	subs      map[uint64]*subscriber
	nextID    uint64
	published atomic.Uint64
	dropped   atomic.Uint64
	now       func() time.Time
	// forward, when a cluster bus is joined, takes every event published
	// here to the other servers.
	forward atomic.Pointer[func(Event)]
	// cluster is the cluster bus joined, for server_health.
	cluster atomic.Pointer[Cluster]
	// subscribed is set once every plugin of this server has subscribed:
	// before, an event awaited by its publisher (PublishAwait) would find
	// some handlers missing and be called handled without them.
	subscribed atomic.Bool
	// allSubscribed is closed by the first MarkSubscribed.
	allSubscribed chan struct{}
	markOnce      sync.Once
}

// New returns an empty bus.
func New(log hclog.Logger) *Bus {
	return &Bus{log: log, subs: map[uint64]*subscriber{}, now: time.Now, allSubscribed: make(chan struct{})}
}

// Subscribe registers h for events matching pattern and returns a function
// that unsubscribes (and waits for the handler goroutine to finish).
func (b *Bus) Subscribe(name, pattern string, h Handler) (unsubscribe func()) {
	return b.SubscribeSet(name, []string{pattern}, h)
}

// SubscribeSet registers h once for a set of patterns: an event matching
// several of them ("*" and "demo.*") reaches h once. An empty set matches
// nothing. It returns a function that unsubscribes (and waits for the
// handler goroutine to finish).
func (b *Bus) SubscribeSet(name string, patterns []string, h Handler) (unsubscribe func()) {
	return b.subscribe(name, patterns, false, func(ev Event) error { h(ev); return nil })
}

func (b *Bus) subscribe(name string, patterns []string, local bool, h func(Event) error) (unsubscribe func()) {
	return b.start(name, patterns, local, 1, func(ds []delivery, outcomes []error) {
		outcomes[0] = b.safely(name, ds[0].ev.Type, func() error { return h(ds[0].ev) })
	})
}

// start registers a subscriber and runs its goroutine: it takes the next
// delivery and, up to most in all, those already queued behind it (never waiting
// for more), runs them, and tells each awaiting publisher its own outcome.
func (b *Bus) start(name string, patterns []string, local bool, most int, run func(ds []delivery, outcomes []error)) (unsubscribe func()) {
	s := &subscriber{name: name, patterns: append([]string(nil), patterns...), local: local, ch: make(chan delivery, QueueSize), done: make(chan struct{})}
	b.mu.Lock()
	b.nextID++
	s.id = b.nextID
	b.subs[s.id] = s
	b.mu.Unlock()
	go func() {
		defer close(s.done)
		ds := make([]delivery, 0, most)
		outcomes := make([]error, most)
		for d := range s.ch {
			ds = drain(s.ch, append(ds[:0], d), most)
			out := outcomes[:len(ds)]
			clear(out)
			run(ds, out)
			for i, d := range ds {
				if d.wait != nil {
					d.wait.finish(name, out[i])
				}
			}
			clear(ds) // the events' data is not kept past their run
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s.id)
			b.mu.Unlock()
			close(s.ch)
			<-s.done
		})
	}
}

// safely runs f, turning a panic into an error (logged) so one event's
// handler cannot end its subscriber's goroutine.
func (b *Bus) safely(name, what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("event handler panicked", "subscriber", name, "event", what, "panic", r)
			err = fmt.Errorf("subscriber %s panicked on %s", name, what)
		}
	}()
	return f()
}

// Publish stamps ev (id and time when empty) and queues it for every
// matching subscriber, and for the other servers of a joined cluster. It
// returns the stamped event.
func (b *Bus) Publish(ev Event) Event {
	ev.Origin = ""
	ev = b.stamp(ev)
	b.published.Add(1)
	b.fanOut(ev, nil)
	if f := b.forward.Load(); f != nil {
		(*f)(ev)
	}
	return ev
}

// PublishAwait is Publish for a publisher that must know when the event's
// side effects are done: wait returns once every local (plugin)
// subscriber's handler has returned, with the first failure (a handler's
// error, or a queue too full to take the event). Other subscribers
// (sessions, the cluster bus) are served as by Publish, without waiting.
func (b *Bus) PublishAwait(ev Event) (stamped Event, wait func(ctx context.Context) error) {
	ev.Origin = ""
	ev = b.stamp(ev)
	b.published.Add(1)
	h := &handled{done: make(chan struct{})}
	b.fanOut(ev, h)
	if f := b.forward.Load(); f != nil {
		(*f)(ev)
	}
	return ev, h.wait
}

// MarkSubscribed records that every plugin of this server has subscribed;
// Subscribed reports it. The host marks it once its plugins have started.
func (b *Bus) MarkSubscribed() {
	b.subscribed.Store(true)
	b.markOnce.Do(func() { close(b.allSubscribed) })
}
func (b *Bus) Subscribed() bool { return b.subscribed.Load() }

// AwaitSubscribed returns once every plugin of this server has subscribed
// (true), or when ctx ends first (false).
func (b *Bus) AwaitSubscribed(ctx context.Context) bool {
	select {
	case <-b.allSubscribed:
		return true
	case <-ctx.Done():
		return b.Subscribed()
	}
}

// PublishRemote queues an event another server published for every
// matching subscriber but the local ones; it goes no further.
func (b *Bus) PublishRemote(ev Event, origin string) {
	ev.Origin = origin
	b.fanOut(b.stamp(ev), nil)
}

// Forward sends every event published from now on to f as well (nil
// stops). f must not block.
func (b *Bus) Forward(f func(Event)) {
	if f == nil {
		b.forward.Store(nil)
		return
	}
	b.forward.Store(&f)
}

// Cluster returns the cluster bus this bus joined, or nil.
func (b *Bus) Cluster() *Cluster { return b.cluster.Load() }

func (b *Bus) stamp(ev Event) Event {
	if ev.ID == "" {
		ev.ID = newID()
	}
	if ev.Time == "" {
		ev.Time = b.now().UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if len(ev.Data) == 0 {
		ev.Data = json.RawMessage(`{}`)
	}
	return ev
}

// fanOut queues ev for every matching subscriber; with h, the local ones
// tell h when their handler has returned, and h is armed once all are
// queued.
func (b *Bus) fanOut(ev Event, h *handled) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, s := range b.subs {
		if !s.matches(ev.Type) || (s.local && ev.Origin != "") {
			continue
		}
		d := delivery{ev: ev}
		if h != nil && s.local {
			d.wait = h
			h.add()
		}
		select {
		case s.ch <- d:
		default:
			b.dropped.Add(1)
			b.log.Warn("event dropped: subscriber queue full", "subscriber", s.name, "event", ev.Type)
			if d.wait != nil {
				d.wait.finish(s.name, errors.New("queue full"))
			}
		}
	}
	if h != nil {
		h.arm()
	}
}

// Stats reports counters for server_health: events published here,
// dropped, and the subscribers.
func (b *Bus) Stats() (published, dropped uint64, subscribers int) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.published.Load(), b.dropped.Load(), len(b.subs)
}

func newID() string {
	var buf [12]byte
	_, _ = rand.Read(buf[:])
	return "evt_" + hex.EncodeToString(buf[:])
}
