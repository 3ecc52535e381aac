package lane

import (
	"sync"
	"testing"
	"time"
)

// Calls that wait for each other all run at once: a busy worker never
// holds a call back.
func TestWorkersRunBlockedCallsConcurrently(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	w := &workers{idle: make(chan func()), done: done}
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	release := make(chan struct{})
	finished := make(chan struct{}, n)
	for range n {
		w.run(func() {
			started.Done()
			<-release
			finished <- struct{}{}
		})
	}
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("calls waited for busy workers")
	}
	close(release)
	for range n {
		<-finished
	}
	// Idle workers take later calls.
	got := make(chan int, 1)
	w.run(func() { got <- 42 })
	if v := <-got; v != 42 {
		t.Fatal(v)
	}
}
