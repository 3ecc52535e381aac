package lane

import "time"

// workerIdle is how long a worker goroutine waits for the next call before
// it ends.
const workerIdle = 30 * time.Second

// workers runs calls on goroutines that outlive one call. A fresh
// goroutine starts with a small stack, and a tool handler (a store
// transaction, JSON) grows it by copying on every call: about an eighth of
// the core plugin's CPU in a call loop. A worker keeps the stack it grew.
type workers struct {
	// idle is unbuffered: a send succeeds only when a worker is waiting.
	idle chan func()
	done <-chan struct{}
}

// run hands f to a waiting worker, or starts one.
func (w *workers) run(f func()) {
	select {
	case w.idle <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		f()
		t.Reset(workerIdle)
		select {
		case f = <-w.idle:
		case <-t.C:
			return
		case <-w.done:
			return
		}
	}
}
