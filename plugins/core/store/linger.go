package store

import (
	"cmp"
	"time"
)

// Lingering: under load a group commit holds its transaction open a little
// for the calls it expects, instead of committing as soon as the queue is
// empty. Eight clients each waiting for their previous answer arrive spread
// over their round trip, so without it the batches stay small and every
// write pays a large share of a commit (spill, two fsyncs: most of a write's
// CPU). The expectation is the largest batch of the recent commits; a lone
// writer's batches are of one, so it never lingers, and no transaction
// lingers longer than lingerMax in all.

// lingerMax bounds the time a transaction waits for company.
const lingerMax = time.Millisecond

// peakWindow is the number of commits after which the expected batch size
// forgets older peaks: short, so a writer left alone after a burst pays
// the linger on a handful of commits at most (2 × peakWindow).
const peakWindow = 4

// wake tells a lingering committer that a call arrived; g.mu is held.
func (g *group) wake() {
	if g.arrived == nil {
		return
	}
	select {
	case g.arrived <- struct{}{}:
	default:
	}
}

// linger waits, while batch holds fewer than the recent peak of calls and
// before *until (set on the first wait), for another call to arrive; false
// means commit now.
func (g *group) linger(batch int, until *time.Time, shared bool) bool {
	if batch >= maxBatch {
		return false // full: later calls wait for the next transaction
	}
	g.mu.Lock()
	expect := max(g.peak, g.prevPeak)
	// A shared transaction cannot take in an exclusive call (join): one
	// at the head of the queue waits for the next transaction, and so
	// does this one's lingering.
	joinable := len(g.pending) > 0 && (!shared || g.pending[0].shared)
	if batch >= expect || len(g.pending) > 0 {
		g.mu.Unlock()
		return joinable
	}
	if g.arrived == nil {
		g.arrived = make(chan struct{}, 1)
	}
	arrived := g.arrived
	g.mu.Unlock()
	now := time.Now()
	if until.IsZero() {
		*until = now.Add(cmp.Or(g.lingerMax, lingerMax))
	}
	left := until.Sub(now)
	if left <= 0 {
		return false
	}
	if g.timer == nil {
		g.timer = time.NewTimer(left)
	} else {
		g.timer.Reset(left)
	}
	defer g.timer.Stop()
	select {
	case <-arrived:
		return true
	case <-g.timer.C:
		return false
	}
}

// committed records the size of a committed batch.
func (g *group) committed(batch int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.peak = max(g.peak, batch)
	if g.commits++; g.commits == peakWindow {
		g.prevPeak, g.peak, g.commits = g.peak, 0, 0
	}
}
