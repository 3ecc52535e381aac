package kv

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Stalls: a transaction's statements share one context, cancelled once a
// round trip has waited TxTimeout for the database's answer. A deadline on
// the whole transaction instead failed a big transaction that a loaded
// machine ran slowly although the database answered every statement
// (docs/decisions.md D42: the suite passes under load); what such a
// deadline is for, a database or a connection that answers nothing, this
// catches as well. The wait for a lock is bounded tighter, by LockTimeout,
// and PostgreSQL ends a deadlock by itself.

// stallGuard cancels ctx when an awaited answer takes longer than limit.
// It belongs to one transaction, used by one goroutine at a time.
type stallGuard struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	limit  time.Duration
	timer  *time.Timer
}

func newStallGuard(limit time.Duration) *stallGuard {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &stallGuard{ctx: ctx, cancel: cancel, limit: limit}
}

// waiting starts, or restarts, the wait for the database's answer.
func (g *stallGuard) waiting() {
	if g.timer == nil {
		g.timer = time.AfterFunc(g.limit, func() { g.cancel(errStalled{g.limit}) })
		return
	}
	g.timer.Reset(g.limit)
}

// answered ends the wait: time spent in the caller's own code until the
// next round trip is not the database's.
func (g *stallGuard) answered() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// end releases the context with the transaction.
func (g *stallGuard) end() {
	g.answered()
	g.cancel(context.Canceled)
}

// explain is err, saying so when a stall cut it short.
func (g *stallGuard) explain(err error) error {
	var stalled errStalled
	if err != nil && errors.As(context.Cause(g.ctx), &stalled) {
		return fmt.Errorf("%v (%w)", stalled, err)
	}
	return err
}

type errStalled struct{ after time.Duration }

func (e errStalled) Error() string {
	return fmt.Sprintf("the database answered nothing for %s", e.after)
}
