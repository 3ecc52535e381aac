package events

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestPublishAwaitWaitsForLocalHandlers: the wait ends only after every
// local subscriber's handler returned, reports a handler's failure, and
// does not wait for a session (non-local) subscriber.
func TestPublishAwaitWaitsForLocalHandlers(t *testing.T) {
	b := newBus()
	release := make(chan struct{})
	var handled atomic.Int32
	defer b.SubscribeLocalBatch("admin", []string{"*"}, oneByOne(func(Event) error {
		<-release
		handled.Add(1)
		return nil
	}))()
	defer b.SubscribeLocalBatch("other", []string{"task.*"}, oneByOne(func(ev Event) error {
		if ev.Type == "task.bad" {
			return errors.New("store down")
		}
		return nil
	}))()
	stuck := make(chan struct{})
	unsubSession := b.Subscribe("session", "*", func(Event) { <-stuck })
	defer func() { close(stuck); unsubSession() }()

	ev, wait := b.PublishAwait(Event{ID: "evt_kept", Type: "task.created", Time: "2026-01-01T00:00:00.000Z"})
	if ev.ID != "evt_kept" || ev.Time != "2026-01-01T00:00:00.000Z" {
		t.Fatalf("the publisher's id and time were replaced: %+v", ev)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait returned %v before the local handler returned", err)
	}
	close(release)
	if err := wait(context.Background()); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if handled.Load() != 1 {
		t.Fatalf("handler ran %d times, want 1", handled.Load())
	}

	_, wait = b.PublishAwait(Event{ID: "evt_bad", Type: "task.bad"})
	if err := wait(context.Background()); err == nil {
		t.Fatal("a failing local handler was not reported")
	}

	// No local subscriber matches: the wait ends at once.
	_, wait = b.PublishAwait(Event{ID: "evt_none", Type: "nobody.hears"})
	ctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if err := wait(ctx); err != nil {
		t.Fatalf("wait without local subscribers: %v", err)
	}
}
