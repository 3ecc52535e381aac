package engine

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// Timings of the drainer; variables so tests can shorten them.
var (
	// retryBase is the pause before an event that was not handled is
	// published again; it doubles with each failed attempt up to
	// retryMax.
	retryBase = time.Second
	retryMax  = 5 * time.Minute
	// removeDelay is how long handled events wait for a write to drop
	// them from the document before the drainer replaces it just for
	// that: under a stream of writes, removal costs no write of its own.
	removeDelay = 200 * time.Millisecond
	// foreignGrace is how long an event this process did not record
	// waits before this process publishes it (PostgreSQL): the server
	// that recorded it is normally done with it by then, and one that
	// died is covered. On the file it is 0: one process holds it, so
	// what it finds at start was left by a dead one.
	foreignGrace = 10 * time.Second
	// pollEvery is how often a drainer on PostgreSQL looks at the shared
	// document for other servers' events.
	pollEvery = time.Second
)

// drainer publishes an engine's outbox (outbox.go). A write hands it the
// events it recorded, published at once and in commit order (pump); its
// loop (run) publishes what a dead process left at start, retries events
// that were not handled, on PostgreSQL publishes other servers' events
// they did not get handled in time, and removes handled events from the
// document.
type drainer struct {
	e       *Engine
	publish PublishFunc
	grace   time.Duration
	poll    time.Duration // 0: no polling (the file)

	// pubMu makes one publisher at a time, so events reach the host in
	// the order they were recorded.
	pubMu sync.Mutex

	mu sync.Mutex
	// fifo holds events recorded by this process's writes, not yet
	// published.
	fifo []Event
	// inflight: published, outcome not yet heard.
	inflight map[string]bool
	// handled: handled downstream, still in the document.
	handled   map[string]bool
	handledAt time.Time // when the oldest of handled was
	// failed: not handled; published again at .at.
	failed map[string]retry
	// own: events this process recorded (no grace), by the number of
	// the record call; seq numbers those calls.
	own map[string]uint64
	seq uint64
	// seen: when this process first saw another process's event.
	seen map[string]time.Time
	// hold pauses publication after the publisher refused an event
	// outright (no host), doubling with holdN.
	hold  time.Time
	holdN int
	// rescan asks the loop to look at the document at its next pass (an
	// event failed, publication was held or resumed); nextScan is when
	// it looks anyway.
	rescan   bool
	nextScan time.Time
	// gen counts forget calls: a pass whose look at the document
	// predates one may hold events already removed, and starts again.
	gen int

	// version and cached are the PostgreSQL row version last read and its
	// outbox; only the loop touches them.
	version string
	cached  []Event

	kick     chan struct{}
	stop     chan struct{}
	finished chan struct{}
	started  sync.Once
	stopped  sync.Once
}

type retry struct {
	attempts int
	at       time.Time
}

func newDrainer(e *Engine, publish PublishFunc) *drainer {
	d := &drainer{
		e: e, publish: publish,
		inflight: map[string]bool{}, handled: map[string]bool{}, failed: map[string]retry{}, own: map[string]uint64{}, seen: map[string]time.Time{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), finished: make(chan struct{}),
	}
	if e.pg != nil {
		d.grace, d.poll = foreignGrace, pollEvery
	}
	return d
}

func backoff(attempts int) time.Duration {
	p := retryBase
	for i := 1; i < attempts && p < retryMax; i++ {
		p *= 2
	}
	return min(p, retryMax)
}

// record takes the events a write just persisted. The caller holds the
// engine lock, so records arrive in commit order.
func (d *drainer) record(evs []Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seq++
	for _, ev := range evs {
		d.fifo = append(d.fifo, ev)
		d.inflight[ev.ID] = true
		d.own[ev.ID] = d.seq
	}
}

// pump publishes the recorded events not yet published, in order.
func (d *drainer) pump() {
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	d.mu.Lock()
	evs := d.fifo
	d.fifo = nil
	d.mu.Unlock()
	d.send(evs)
}

// send publishes evs, already marked in flight, in order; the caller holds
// pubMu. After a refusal the rest wait with it.
func (d *drainer) send(evs []Event) {
	for i, ev := range evs {
		id := ev.ID
		if err := d.publish(ev, func(err error) { d.finish(id, err) }); err != nil {
			d.mu.Lock()
			now := time.Now()
			d.holdN++
			d.hold = now.Add(backoff(d.holdN))
			d.rescan = true
			for _, rest := range evs[i:] {
				delete(d.inflight, rest.ID)
			}
			d.mu.Unlock()
			d.e.warn("sdd events not published; retrying", "events", len(evs)-i, "error", err)
			d.wake()
			return
		}
	}
}

// finish records an event's outcome.
func (d *drainer) finish(id string, err error) {
	d.mu.Lock()
	delete(d.inflight, id)
	now := time.Now()
	if err == nil {
		if len(d.handled) == 0 {
			d.handledAt = now
		}
		d.handled[id] = true
		delete(d.failed, id)
		// The host is there again: what waited behind a refusal goes now.
		if !d.hold.IsZero() {
			d.hold, d.holdN, d.rescan = time.Time{}, 0, true
		}
	} else {
		r := d.failed[id]
		r.attempts++
		r.at = now.Add(backoff(r.attempts))
		d.failed[id] = r
		d.rescan = true
	}
	d.mu.Unlock()
	if err != nil {
		d.e.warn("sdd event not handled; publishing it again later", "id", id, "error", err)
	}
	d.wake()
}

func (d *drainer) wake() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// handledSnapshot is the handled ids a write may drop from the document.
func (d *drainer) handledSnapshot() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.handled) == 0 {
		return nil
	}
	out := make(map[string]bool, len(d.handled))
	for id := range d.handled {
		out[id] = true
	}
	return out
}

// forget drops ids a successful write took out of the document (or found
// gone already).
func (d *drainer) forget(ids map[string]bool) {
	if len(ids) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	for id := range ids {
		delete(d.handled, id)
		delete(d.own, id)
		delete(d.seen, id)
	}
	if len(d.handled) > 0 {
		d.handledAt = time.Now()
	}
}

// start runs the loop until close.
func (d *drainer) start() {
	d.started.Do(func() { go d.run() })
}

// close ends the loop (or keeps it from starting) and removes what was
// handled meanwhile; events still in flight stay in the document for the
// next drainer.
func (d *drainer) close() {
	d.stopped.Do(func() {
		ran := true
		d.started.Do(func() { ran = false })
		close(d.stop)
		if ran {
			<-d.finished
			return
		}
		d.removeHandled()
	})
}

func (d *drainer) run() {
	defer close(d.finished)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-d.stop:
			d.removeHandled()
			return
		case <-d.kick:
		case <-timer.C:
		}
		timer.Reset(d.pass())
	}
}

// removeHandled drops handled events from the document with a replace of
// its own.
func (d *drainer) removeHandled() {
	ids := d.handledSnapshot()
	if len(ids) == 0 {
		return
	}
	if err := d.e.removeEvents(ids); err != nil {
		d.e.warn("handled sdd events not removed from the state; retrying", "error", err)
		d.mu.Lock()
		d.handledAt = time.Now().Add(retryBase) // not a hot loop on a failing disk
		d.mu.Unlock()
		return
	}
	d.forget(ids)
}

// pass does what is due and returns how long until something else may be:
// it removes handled events once removeDelay has passed, and looks at the
// document when asked to (rescan) or when a look is due (nextScan).
func (d *drainer) pass() time.Duration {
	now := time.Now()
	d.mu.Lock()
	removeDue := len(d.handled) > 0 && !now.Before(d.handledAt.Add(removeDelay))
	scan := d.rescan || !now.Before(d.nextScan)
	d.rescan = false
	d.mu.Unlock()
	if removeDue {
		d.removeHandled()
	}
	if scan {
		d.scan(now)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	wait := d.nextScan.Sub(now)
	if len(d.handled) > 0 {
		wait = min(wait, d.handledAt.Add(removeDelay).Sub(now))
	}
	return max(wait, time.Millisecond)
}

// never is a wait that does not end.
const never = time.Duration(1 << 62)

// scan publishes the document's events that are due and sets when the
// next look is: at the next retry, end of a hold or grace, or poll.
func (d *drainer) scan(now time.Time) {
	next := never
	if d.poll > 0 {
		next = d.poll
	}
	soon := func(at time.Time) {
		if w := at.Sub(now); w < next {
			next = max(w, time.Millisecond)
		}
	}
	d.mu.Lock()
	gen, seq := d.gen, d.seq
	d.mu.Unlock()
	outbox, err := d.outbox()
	if err != nil {
		d.e.warn("sdd event outbox not read; retrying", "error", err)
		d.mu.Lock()
		d.nextScan = now.Add(min(next, retryBase))
		d.mu.Unlock()
		return
	}
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	d.mu.Lock()
	if d.gen != gen {
		// Events left the document meanwhile; look again.
		d.rescan = true
		d.mu.Unlock()
		return
	}
	inDoc := make(map[string]bool, len(outbox))
	var due []Event
	for _, ev := range outbox {
		inDoc[ev.ID] = true
		if d.inflight[ev.ID] || d.handled[ev.ID] {
			continue
		}
		if now.Before(d.hold) {
			soon(d.hold)
			continue
		}
		if _, mine := d.own[ev.ID]; !mine {
			first, ok := d.seen[ev.ID]
			if !ok {
				first = now
				d.seen[ev.ID] = now
			}
			if now.Sub(first) < d.grace {
				soon(first.Add(d.grace))
				continue
			}
		}
		if r, ok := d.failed[ev.ID]; ok && now.Before(r.at) {
			soon(r.at)
			continue
		}
		d.inflight[ev.ID] = true
		due = append(due, ev)
	}
	// What is no longer in the document was removed (here or by another
	// server); forget it, unless it is still in flight or was recorded
	// after this look at the document began.
	for id, n := range d.own {
		if !inDoc[id] && !d.inflight[id] && !d.handled[id] && n <= seq {
			delete(d.own, id)
			delete(d.failed, id)
		}
	}
	for id := range d.seen {
		if !inDoc[id] && !d.inflight[id] && !d.handled[id] {
			delete(d.seen, id)
			delete(d.failed, id)
		}
	}
	d.nextScan = now.Add(next)
	d.mu.Unlock()
	d.send(due)
}

// outbox is the document's pending events, oldest first. On PostgreSQL the
// row is read only when its version changed since the last look, and then
// only its outbox is decoded.
func (d *drainer) outbox() ([]Event, error) {
	if d.e.pg == nil {
		return d.e.pendingOutbox()
	}
	doc, version, err := d.e.pg.loadIfChanged(d.version)
	if err != nil || version == d.version {
		return d.cached, err
	}
	var st struct {
		Outbox []Event `json:"pendingEvents"`
	}
	if len(doc) > 0 {
		if err := json.Unmarshal(doc, &st); err != nil {
			return nil, fmt.Errorf("the SDD state in %s does not decode: %w", d.e.pg.where, err)
		}
	}
	d.version, d.cached = version, st.Outbox
	return d.cached, nil
}
