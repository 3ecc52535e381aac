package daemon

import (
	"sync"
	"time"
)

// fakeTimers is a clock that moves only when a test advances it: the
// daemon's idle timer (Options.afterFunc) fires without real time passing.
type fakeTimers struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
}

type fakeTimer struct {
	clock         *fakeTimers
	at            time.Duration
	f             func()
	stopped, done bool
}

func (c *fakeTimers) afterFunc(d time.Duration, f func()) stopper {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: c.now + d, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop reports whether it stopped the timer, as time.Timer's does.
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.stopped && !t.done
	t.stopped = true
	return was
}

// armed counts the timers that would still fire.
func (c *fakeTimers) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped && !t.done {
			n++
		}
	}
	return n
}

// advance moves the clock by d and runs, outside its lock, the functions
// of the timers that came due (a function may start another timer).
func (c *fakeTimers) advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	var due []func()
	for _, t := range c.timers {
		if !t.stopped && !t.done && t.at <= c.now {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}
