package host

import "time"

// requestWorkerIdle is how long a request goroutine waits for the next
// request before it ends.
const requestWorkerIdle = 30 * time.Second

// requestWorkers runs the requests of every session on goroutines that
// outlive one request. A fresh goroutine starts with a small stack, and a
// tool call through mcp-go and the pipeline grows it by copying on every
// request (a twelfth of the host's CPU in a call loop); a worker keeps the
// stack it grew. The zero value works: it starts a goroutine per request.
type requestWorkers struct {
	// idle is unbuffered: a send succeeds only when a worker is waiting.
	idle chan func()
}

func newRequestWorkers() requestWorkers { return requestWorkers{idle: make(chan func())} }

// run hands f to a waiting worker, or starts one.
func (w requestWorkers) run(f func()) {
	select {
	case w.idle <- f:
	default:
		go w.loop(f)
	}
}

func (w requestWorkers) loop(f func()) {
	t := time.NewTimer(requestWorkerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(requestWorkerIdle)
		select {
		case f = <-w.idle:
		case <-t.C:
			return
		}
	}
}
