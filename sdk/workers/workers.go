// Package workers runs short functions on goroutines that outlive one
// call. A fresh goroutine starts with a small stack, and a tool call (mcp-go
// and the pipeline in the host, a store transaction and JSON in a plugin)
// grows it by copying on every call: an eighth to a twelfth of a process's
// CPU in a call loop. A worker keeps the stack it grew.
package workers

import "time"

// Idle is how long a worker waits for the next function before it ends.
const Idle = 30 * time.Second

// Pool hands functions to waiting workers. The zero value works: it starts
// a goroutine per function.
type Pool struct {
	// idle is unbuffered: a send succeeds only when a worker is waiting.
	idle chan func()
	done <-chan struct{}
}

// New returns a pool whose idle workers also end when done closes (nil:
// only after Idle).
func New(done <-chan struct{}) Pool { return Pool{idle: make(chan func()), done: done} }

// Run hands f to a waiting worker, or starts one.
func (p Pool) Run(f func()) {
	select {
	case p.idle <- f:
	default:
		go p.loop(f)
	}
}

func (p Pool) loop(f func()) {
	t := time.NewTimer(Idle)
	defer t.Stop()
	for {
		f()
		if p.idle == nil {
			return // the zero Pool: nothing can reach this worker
		}
		t.Reset(Idle)
		select {
		case f = <-p.idle:
		case <-t.C:
			return
		case <-p.done:
			return
		}
	}
}
