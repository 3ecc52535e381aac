// Package outbox drains the core store's event outbox: it
// publishes the events recorded with committed writes, in order, and
// removes each one only once it has been handled downstream, so an
// acknowledged write's event survives the death of its server. Any number
// of drainers may share a store; leases in the store keep them from
// publishing the same entry at once.
//
// A running drainer takes the events this process's group commits record
// straight from the store, already leased to it, and publishes them at
// once; handled ones leave with a later commit (no claim or
// removal commit per write batch). It claims only what that path does not
// cover: entries a crash or another server left, lapsed leases, retries.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Publish hands one event downstream without waiting; done hears nil once
// it has been handled there, or why it must be published again.
type Publish func(ev store.OutboxEvent, done func(error)) error

// Options tune a Drainer; zero values take the defaults.
type Options struct {
	// Lease is how long a claimed entry stays the drainer's; past it
	// another drainer may publish it (the event keeps its id, so
	// subscribers recognise the redelivery).
	Lease time.Duration
	// Poll is how often the drainer looks for entries without a kick:
	// another server's lapsed leases, released entries to retry.
	Poll time.Duration
	// Retry is the pause before an entry that was not handled is
	// claimed again; it doubles with each failed attempt up to MaxRetry.
	Retry    time.Duration
	MaxRetry time.Duration
	// Batch bounds the entries claimed at once.
	Batch int
	// RemovalDelay is how long a handled event waits for a write's
	// commit to remove it before it gets a commit of its own; 0 means
	// store.DefaultRemovalDelay.
	RemovalDelay time.Duration
	// Owner names the drainer in its leases; empty: host, pid and a
	// random suffix.
	Owner string
	Log   hclog.Logger
	Now   func() time.Time
}

// Drainer publishes a store's outbox.
type Drainer struct {
	st      *store.Store
	publish Publish
	opts    Options
	mu      sync.Mutex // one drain at a time per drainer
	// running is true while the drainer takes the store's fresh events.
	running atomic.Bool
}

// New returns a drainer of st's outbox; Start or Run starts it.
func New(st *store.Store, publish Publish, opts Options) *Drainer {
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	if opts.MaxRetry < opts.Retry {
		opts.MaxRetry = 5 * time.Minute
	}
	if opts.Batch <= 0 {
		opts.Batch = 128
	}
	if opts.Owner == "" {
		opts.Owner = ownerName()
	}
	if opts.Log == nil {
		opts.Log = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Drainer{st: st, publish: publish, opts: opts}
}

// retryAt is when an entry that failed attempts times is claimed again.
func (d *Drainer) retryAt(attempts int) time.Time {
	pause := d.opts.Retry
	for i := 1; i < attempts && pause < d.opts.MaxRetry; i++ {
		pause *= 2
	}
	return d.opts.Now().Add(min(pause, d.opts.MaxRetry))
}

func ownerName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Start clears the leases a dead process left (on bbolt), takes the
// events the store's group commits record from now on, and drains in a
// goroutine until ctx ends: what a crash left at once, then every Poll
// (entries of a dead server whose lease lapsed, retries, events recorded
// outside a group commit). done closes once it has stopped. Taking before
// Start returns means no write after it records an event only a poll finds.
func (d *Drainer) Start(ctx context.Context) (done <-chan struct{}) {
	if err := d.st.ClearEventLeases(); err != nil {
		d.opts.Log.Warn("event outbox leases not cleared", "error", err)
	}
	d.running.Store(true)
	stopTaking := d.st.TakeEvents(&store.EventTaker{Owner: d.opts.Owner, Lease: d.opts.Lease, Now: d.opts.Now, Take: d.take, RemovalDelay: d.opts.RemovalDelay})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer func() {
			stopTaking()
			d.running.Store(false)
		}()
		d.poll(ctx)
	}()
	return stopped
}

// Run is Start, returning once the drainer has stopped.
func (d *Drainer) Run(ctx context.Context) { <-d.Start(ctx) }

func (d *Drainer) poll(ctx context.Context) {
	t := time.NewTicker(d.opts.Poll)
	defer t.Stop()
	for {
		for ctx.Err() == nil {
			n, err := d.Drain(ctx)
			if err != nil && ctx.Err() == nil {
				d.opts.Log.Warn("event outbox not drained; retrying", "error", err)
			}
			if err != nil || n < d.opts.Batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// take publishes the entries a group commit recorded leased to this
// drainer, in order, without waiting: a handled one leaves with a later
// commit, one that was not is released for a retry. Entries it gets after
// the drainer stopped stay leased, like a crash's.
func (d *Drainer) take(evs []store.OutboxEvent) {
	if !d.running.Load() {
		return
	}
	for i, ev := range evs {
		if err := d.publish(ev, func(err error) { d.settle(ev, err) }); err != nil {
			go d.release(evs[i:], err)
			return
		}
	}
}

// settle records the outcome of a taken entry's publication.
func (d *Drainer) settle(ev store.OutboxEvent, err error) {
	if err == nil {
		d.st.DoneEventsLater([]store.OutboxEvent{ev})
		return
	}
	go d.release([]store.OutboxEvent{ev}, err)
}

func (d *Drainer) release(evs []store.OutboxEvent, cause error) {
	if err := d.st.ReleaseEvents(d.opts.Owner, evs, d.retryAt); err != nil {
		d.opts.Log.Warn("event outbox entries not released; they retry when their lease lapses", "error", err)
	}
	d.opts.Log.Warn("events not handled; retrying", "events", len(evs), "error", cause)
}

// Drain claims one batch, publishes it in order and waits for the
// outcomes: handled entries are removed, the others released for a retry.
// It returns how many entries it claimed.
func (d *Drainer) Drain(ctx context.Context) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	evs, err := d.st.ClaimEvents(d.opts.Owner, d.opts.Now(), d.opts.Lease, d.opts.Batch)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	outcomes := make([]chan error, len(evs))
	var pubErr error
	for i, ev := range evs {
		ch := make(chan error, 1)
		outcomes[i] = ch
		if pubErr != nil {
			ch <- pubErr
			continue
		}
		if err := d.publish(ev, func(err error) { ch <- err }); err != nil {
			pubErr = err
			ch <- err
		}
	}
	// Past the lease another drainer may take the entries; stop waiting.
	wctx, cancel := context.WithTimeout(ctx, d.opts.Lease)
	defer cancel()
	var done, failed []store.OutboxEvent
	var firstErr error
	for i, ch := range outcomes {
		select {
		case err := <-ch:
			if err == nil {
				done = append(done, evs[i])
				continue
			}
			if firstErr == nil {
				firstErr = err
			}
		case <-wctx.Done():
			if firstErr == nil {
				firstErr = errors.New("no outcome before the lease ended")
			}
		}
		failed = append(failed, evs[i])
	}
	if err := d.st.DoneEvents(done); err != nil {
		return len(evs), err
	}
	if len(failed) > 0 {
		if err := d.st.ReleaseEvents(d.opts.Owner, failed, d.retryAt); err != nil {
			return len(evs), err
		}
		return len(evs), fmt.Errorf("%d of %d events not handled: %w", len(failed), len(evs), firstErr)
	}
	return len(evs), nil
}
