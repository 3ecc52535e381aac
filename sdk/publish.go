package sdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// publisher delivers a plugin's events to the host in the order they were
// published, without making the publishing write wait for the host: Publish
// queues, one background stream sends, and the host acknowledges each event
// once it is on the bus. An event leaves the queue only when acknowledged,
// so a stream that breaks is reopened and the unacknowledged rest sent again.
type publisher struct {
	client pb.HostClient
	log    hclog.Logger

	mu sync.Mutex
	// pending holds the events not yet acknowledged, oldest first.
	pending []queued
	// sent counts the events of pending already written to the current
	// stream.
	sent int
	// wake kicks the sender; one token is enough.
	wake chan struct{}
	// drained is closed and replaced each time pending shrinks.
	drained chan struct{}
}

// ErrEventRefused is the outcome (see Plugin.PublishDurable) of an event the
// host refused as malformed: publishing it again would not help.
var ErrEventRefused = errors.New("sdk: the host refused the event")

// retryPause is the wait before reopening a broken event stream.
const retryPause = 100 * time.Millisecond

func newPublisher(ctx context.Context, client pb.HostClient, log hclog.Logger) *publisher {
	q := &publisher{client: client, log: log, wake: make(chan struct{}, 1), drained: make(chan struct{})}
	go q.run(ctx)
	return q
}

// queued is one event waiting for its ack; done, when set, hears the
// outcome (see Plugin.PublishDurable).
type queued struct {
	ev   seam.Event
	done func(error)
}

// enqueue adds an event behind every event queued before it; done (may be
// nil) hears its outcome.
func (q *publisher) enqueue(ev seam.Event, done func(error)) {
	q.mu.Lock()
	q.pending = append(q.pending, queued{ev: ev, done: done})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// flush waits until the host has acknowledged every event queued so far.
func (q *publisher) flush(ctx context.Context) error {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.mu.Unlock()
			return nil
		}
		ch := q.drained
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ack drops the n oldest events: the host has them. last is the outcome
// of the newest of them (the host acknowledges each event by its own
// sequence number, so the older ones, if any, succeeded).
func (q *publisher) ack(n int, last error) {
	q.mu.Lock()
	if n > len(q.pending) {
		n = len(q.pending)
	}
	if n <= 0 {
		q.mu.Unlock()
		return
	}
	done := make([]queued, n)
	copy(done, q.pending[:n])
	for i := 0; i < n; i++ {
		q.pending[i] = queued{}
	}
	q.pending = q.pending[n:]
	q.sent -= n
	if q.sent < 0 {
		q.sent = 0
	}
	close(q.drained)
	q.drained = make(chan struct{})
	q.mu.Unlock()
	for i, e := range done {
		if e.done == nil {
			continue
		}
		if i == n-1 {
			e.done(last)
		} else {
			e.done(nil)
		}
	}
}

func (q *publisher) run(ctx context.Context) {
	for ctx.Err() == nil {
		err := q.stream(ctx)
		if status.Code(err) == codes.Unimplemented {
			// A host from before PublishEvents: one Publish call per
			// event, still off the publishing goroutine.
			q.unary(ctx)
			return
		}
		if ctx.Err() != nil {
			return
		}
		q.log.Warn("event stream to the host broke; reopening it", "error", err)
		q.mu.Lock()
		q.sent = 0 // resend what the host did not acknowledge
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryPause):
		}
	}
}

// stream runs one PublishEvents stream until it fails.
func (q *publisher) stream(ctx context.Context) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := q.client.PublishEvents(sctx)
	if err != nil {
		return err
	}
	recvErr := make(chan error, 1)
	go func() {
		var seen uint64
		for {
			m, err := st.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			a := convert.PublishAckFromProto(m)
			var outcome error
			switch {
			case a.Retry:
				outcome = fmt.Errorf("sdk: a subscriber did not handle the event: %s", a.Error)
			case a.Error != "":
				q.log.Warn("the host refused an event", "error", a.Error)
				outcome = fmt.Errorf("%w: %s", ErrEventRefused, a.Error)
			}
			if a.Seq > seen {
				q.ack(int(a.Seq-seen), outcome)
				seen = a.Seq
			}
		}
	}()
	for {
		q.mu.Lock()
		batch := append([]queued(nil), q.pending[q.sent:]...)
		q.sent += len(batch)
		q.mu.Unlock()
		for _, e := range batch {
			if err := st.Send(convert.PublishToProto(e.ev)); err != nil {
				// The real cause arrives on Recv.
				return <-recvErr
			}
		}
		select {
		case <-q.wake:
		case err := <-recvErr:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unary publishes one event per Publish call, in order.
func (q *publisher) unary(ctx context.Context) {
	for {
		q.mu.Lock()
		next := len(q.pending) > 0
		var ev seam.Event
		if next {
			ev = q.pending[0].ev
		}
		q.mu.Unlock()
		if !next {
			select {
			case <-q.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := q.client.Publish(pctx, convert.PublishToProto(ev))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			q.log.Warn("event not published", "event", ev.Type, "error", err)
		}
		q.ack(1, err)
	}
}
