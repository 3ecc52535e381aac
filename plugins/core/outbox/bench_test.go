package outbox

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// BenchmarkDrainedWrites8 measures durable writes that record an event,
// from 8 writers, while a drainer publishes the events (answered at once),
// on bbolt beside the floor (bare single-key commits) measured in the same
// run. "handoff" is the running drainer (events handed over by the group
// commit, removed with the next one); "claim" drains the same writes the
// way every event went before (a claim commit and a removal commit per
// drain, kicked by each write). commits/write counts durable commits.
func BenchmarkDrainedWrites8(b *testing.B) {
	for _, mode := range []string{"handoff", "claim"} {
		b.Run(mode, func(b *testing.B) {
			st, err := store.OpenFor(b.TempDir(), "")
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			var handled atomic.Int64
			publish := func(ev store.OutboxEvent, done func(error)) error {
				go func() { done(nil); handled.Add(1) }()
				return nil
			}
			d := New(st, publish, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			kick := make(chan struct{}, 1)
			if mode == "handoff" {
				stopped := d.Start(ctx)
				wg.Add(1)
				go func() { defer wg.Done(); <-stopped }()
			} else {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-ctx.Done():
							return
						case <-kick:
						}
						if _, err := d.Drain(ctx); err != nil && ctx.Err() == nil {
							b.Error(err)
						}
					}
				}()
			}
			floor := func() float64 {
				r, err := store.CommitFloor(filepath.Join(b.TempDir(), "floor.db"), 200)
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			before := floor()
			commits := st.Commits()
			b.ResetTimer()
			start := time.Now()
			var next atomic.Int64
			var writers sync.WaitGroup
			for w := 0; w < 8; w++ {
				writers.Add(1)
				go func() {
					defer writers.Done()
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						commitEvent(b, st, "bench")
						select {
						case kick <- struct{}{}:
						default:
						}
					}
				}()
			}
			writers.Wait()
			rate := float64(b.N) / time.Since(start).Seconds()
			for handled.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			perWrite := float64(st.Commits()-commits) / float64(b.N)
			cancel()
			wg.Wait()
			floorRate := (before + floor()) / 2
			b.ReportMetric(rate, "writes/s")
			b.ReportMetric(floorRate, "floor_commits/s")
			b.ReportMetric(rate/floorRate, "ratio_to_floor")
			b.ReportMetric(perWrite, "commits/write")
		})
	}
}
