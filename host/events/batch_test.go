package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBatchHandlerTakesWhatQueuedWhileItRan: events published while a
// batch handler is busy reach it next as one batch, in publish order, and
// each awaiting publisher hears its own event's outcome.
func TestBatchHandlerTakesWhatQueuedWhileItRan(t *testing.T) {
	b := newBus()
	calls := make(chan []string, 4)
	release := make(chan struct{})
	defer b.SubscribeLocalBatch("admin", []string{"task.*"}, func(evs []Event) []error {
		ids := make([]string, len(evs))
		out := make([]error, len(evs))
		for i, ev := range evs {
			ids[i] = ev.ID
			if ev.Type == "task.bad" {
				out[i] = fmt.Errorf("refused %s", ev.ID)
			}
		}
		calls <- ids
		if ids[0] == "first" {
			<-release
		}
		return out
	})()

	_, waitFirst := b.PublishAwait(Event{ID: "first", Type: "task.created"})
	if got := <-calls; len(got) != 1 || got[0] != "first" {
		t.Fatalf("first call took %v, want the single event without waiting for more", got)
	}
	const n = 10
	waits := make([]func(context.Context) error, n)
	for i := range n {
		typ := "task.created"
		if i%3 == 1 {
			typ = "task.bad"
		}
		_, waits[i] = b.PublishAwait(Event{ID: fmt.Sprintf("e%d", i), Type: typ})
	}
	close(release)
	if err := waitFirst(context.Background()); err != nil {
		t.Fatalf("first: %v", err)
	}
	got := <-calls
	if len(got) != n {
		t.Fatalf("next call took %v, want the %d queued events at once", got, n)
	}
	for i, id := range got {
		if id != fmt.Sprintf("e%d", i) {
			t.Fatalf("batch = %v, want e0..e%d in order", got, n-1)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, wait := range waits {
		err := wait(ctx)
		if i%3 == 1 {
			if err == nil || !errContains(err, fmt.Sprintf("refused e%d", i)) {
				t.Fatalf("e%d: wait = %v, want its own refusal", i, err)
			}
		} else if err != nil {
			t.Fatalf("e%d: wait = %v, want handled", i, err)
		}
	}
}

// TestBatchesAreBounded: a backlog longer than MaxBatch arrives in batches
// of at most MaxBatch, all of it, in order.
func TestBatchesAreBounded(t *testing.T) {
	b := newBus()
	release := make(chan struct{})
	got := make(chan []Event, QueueSize)
	defer b.SubscribeLocalBatch("admin", []string{"*"}, func(evs []Event) []error {
		if evs[0].ID == "hold" {
			<-release
		}
		got <- append([]Event(nil), evs...) // evs is not kept by the bus's contract
		return make([]error, len(evs))
	})()
	b.Publish(Event{ID: "hold", Type: "x"})
	const n = 3*MaxBatch + 5
	for i := range n {
		b.Publish(Event{ID: fmt.Sprint(i), Type: "x"})
	}
	close(release)
	next := 0
	for next < n {
		select {
		case evs := <-got:
			if len(evs) > MaxBatch {
				t.Fatalf("a batch of %d events, over MaxBatch %d", len(evs), MaxBatch)
			}
			for _, ev := range evs {
				if ev.ID == "hold" {
					continue
				}
				if ev.ID != fmt.Sprint(next) {
					t.Fatalf("got event %s, want %d", ev.ID, next)
				}
				next++
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d events arrived", next, n)
		}
	}
}

// TestBatchHandlerPanicFailsItsBatchOnly: a panic fails the events of the
// batch it ran, and the subscriber goes on with the next.
func TestBatchHandlerPanicFailsItsBatchOnly(t *testing.T) {
	b := newBus()
	defer b.SubscribeLocalBatch("admin", []string{"*"}, func(evs []Event) []error {
		if evs[0].Type == "boom" {
			panic("kaboom")
		}
		return make([]error, len(evs))
	})()
	_, wait := b.PublishAwait(Event{Type: "boom"})
	if err := wait(context.Background()); err == nil || !errContains(err, "panicked") {
		t.Fatalf("wait = %v, want the panic reported", err)
	}
	_, wait = b.PublishAwait(Event{Type: "fine"})
	if err := wait(context.Background()); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

func errContains(err error, s string) bool { return strings.Contains(err.Error(), s) }

// oneByOne is a batch handler running h on each event in turn: the tests'
// plain local subscriber.
func oneByOne(h func(Event) error) BatchHandler {
	return func(evs []Event) []error {
		out := make([]error, len(evs))
		for i, ev := range evs {
			out[i] = h(ev)
		}
		return out
	}
}
