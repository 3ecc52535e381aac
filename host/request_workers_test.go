package host

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRequestWorkersRunEverything: concurrent and one-after-another
// requests all run, on the host's workers and on a zero value alike, and
// one-after-another requests do not each leave a goroutine behind.
func TestRequestWorkersRunEverything(t *testing.T) {
	for name, w := range map[string]requestWorkers{"pool": newRequestWorkers(), "zero": {}} {
		var ran atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			w.run(func() { defer wg.Done(); time.Sleep(time.Millisecond); ran.Add(1) })
		}
		wg.Wait()
		before := runtime.NumGoroutine()
		for i := 0; i < 200; i++ {
			done := make(chan struct{})
			w.run(func() { ran.Add(1); close(done) })
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
