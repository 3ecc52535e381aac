package events

import (
	"context"
	"fmt"
	"sync"
)

// handled counts the local handlers an awaited event (Bus.PublishAwait) is
// still queued for, and keeps the first failure among them.
type handled struct {
	mu      sync.Mutex
	pending int
	armed   bool
	err     error
	done    chan struct{}
}

func (h *handled) add() {
	h.mu.Lock()
	h.pending++
	h.mu.Unlock()
}

// finish records that one handler returned (err nil: it succeeded).
func (h *handled) finish(subscriber string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && h.err == nil {
		h.err = fmt.Errorf("subscriber %s: %w", subscriber, err)
	}
	h.pending--
	h.closeIfDone()
}

// arm marks every handler as counted: from now on, the last finish (or
// arm itself, when none is pending) ends the wait.
func (h *handled) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = true
	h.closeIfDone()
}

func (h *handled) closeIfDone() {
	if h.armed && h.pending == 0 {
		select {
		case <-h.done:
		default:
			close(h.done)
		}
	}
}

// wait blocks until every local handler has returned, or ctx ends.
func (h *handled) wait(ctx context.Context) error {
	select {
	case <-h.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
