package events

import "fmt"

// BatchHandler is a local (plugin) subscriber's handler that takes the
// events already queued for it at once, in the order they were published.
// It returns one outcome per event (nil: handled), each heard by that
// event's awaiting publisher (PublishAwait) alone. It must not keep evs.
type BatchHandler func(evs []Event) []error

// MaxBatch bounds the events a BatchHandler takes in one call.
const MaxBatch = 64

// SubscribeLocalBatch registers a subscriber with side effects in the
// shared store (a plugin): it hears events published on this server only,
// never those a cluster bus brings from other servers, and a publisher that
// awaits its event (PublishAwait) waits for h and hears that event's
// outcome. When several events are queued for the subscriber they reach h
// in one call (up to MaxBatch); a single event is never held back to fill
// a batch.
func (b *Bus) SubscribeLocalBatch(name string, patterns []string, h BatchHandler) (unsubscribe func()) {
	evs := make([]Event, 0, MaxBatch)
	return b.start(name, patterns, true, MaxBatch, func(ds []delivery, outcomes []error) {
		evs = evs[:0]
		for _, d := range ds {
			evs = append(evs, d.ev)
		}
		what := ds[0].ev.Type
		if len(ds) > 1 {
			what = fmt.Sprintf("a batch of %d events from %s", len(ds), what)
		}
		var got []error
		if err := b.safely(name, what, func() error { got = h(evs); return nil }); err != nil {
			fill(outcomes, err)
		} else if len(got) != len(ds) {
			fill(outcomes, fmt.Errorf("subscriber %s answered %d outcomes for %d events", name, len(got), len(ds)))
		} else {
			copy(outcomes, got)
		}
		clear(evs)
	})
}

// drain appends to ds the deliveries already queued on ch, up to most in
// all, without waiting for any.
func drain(ch <-chan delivery, ds []delivery, most int) []delivery {
	for len(ds) < most {
		select {
		case d, ok := <-ch:
			if !ok {
				return ds
			}
			ds = append(ds, d)
		default:
			return ds
		}
	}
	return ds
}

func fill(outcomes []error, err error) {
	for i := range outcomes {
		outcomes[i] = err
	}
}
