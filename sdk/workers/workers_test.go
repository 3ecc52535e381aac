package workers

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolRunsEverything: concurrent and one-after-another functions all
// run, on a pool and on a zero value alike, and one-after-another functions
// do not each leave a goroutine behind.
func TestPoolRunsEverything(t *testing.T) {
	for name, w := range map[string]Pool{"pool": New(nil), "zero": {}} {
		var ran atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			// Each call lasts a moment, so the fifty overlap.
			w.Run(func() { defer wg.Done(); time.Sleep(time.Millisecond); ran.Add(1) })
		}
		wg.Wait()
		before := runtime.NumGoroutine()
		for i := 0; i < 200; i++ {
			done := make(chan struct{})
			w.Run(func() { ran.Add(1); close(done) })
			<-done
		}
		if ran.Load() != 250 {
			t.Fatalf("%s: %d of 250 ran", name, ran.Load())
		}
		if name == "pool" && runtime.NumGoroutine() > before+50 {
			t.Errorf("pool: %d goroutines after 200 sequential requests, %d before", runtime.NumGoroutine(), before)
		}
	}
}

// Calls that wait for each other all run at once: a busy worker never
// holds a call back.
func TestPoolRunsBlockedCallsConcurrently(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	defer close(done)
	w := New(done)
	const n = 8
	var started sync.WaitGroup
	started.Add(n)
	release := make(chan struct{})
	finished := make(chan struct{}, n)
	for range n {
		w.Run(func() {
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
	w.Run(func() { got <- 42 })
	if v := <-got; v != 42 {
		t.Fatal(v)
	}
}
