package audit

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/outbox"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// BenchmarkCoreWrites8 measures the core plugin's durable write paths as the
// plugin wires them (the task service's changes appended to the event
// chain, every event recorded in the outbox and drained by a running
// drainer) from 8 concurrent goroutines on a real bbolt file, beside the
// floor (a bare one-key bbolt commit) measured in the same run. Besides the
// rate and its ratio to the floor it reports the process's CPU time per
// write (getrusage: user + system, every goroutine), heap allocations per
// write and writes per durable commit: on a CPU-bound machine the CPU per
// write bounds the rate, whatever the disk does.
func BenchmarkCoreWrites8(b *testing.B) {
	b.Run("task_create", func(b *testing.B) {
		c := newCoreBench(b)
		c.run(b, func(i int) error {
			_, err := c.tasks.Create("bench", tasks.CreateInput{Title: fmt.Sprintf("task %d", i), Project: "proj-0"})
			return err
		})
	})
	b.Run("thought_record", func(b *testing.B) {
		c := newCoreBench(b)
		out, err := c.tasks.Create("bench", tasks.CreateInput{Title: "thoughts go here", Project: "proj-0"})
		if err != nil {
			b.Fatal(err)
		}
		c.run(b, func(i int) error {
			_, err := c.audit.Record("bench", RecordInput{TaskID: out.TaskID, Type: "reflection", Content: fmt.Sprintf("thought %d", i)})
			return err
		})
	})
}

type coreBench struct {
	st    *store.Store
	tasks *tasks.Service
	audit *Service
}

func newCoreBench(b *testing.B) *coreBench {
	st, err := store.OpenFor(b.TempDir(), "")
	if err != nil {
		b.Fatal(err)
	}
	record := func(tx kv.Tx, typ string, data map[string]any, at time.Time) error {
		_, err := st.RecordEvent(tx, typ, data, at)
		return err
	}
	aud := New(st, Config{Record: record})
	svc := tasks.New(st, tasks.Config{Record: record, OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail})
	// Downstream answers at once, as a host that is keeping up does.
	d := outbox.New(st, func(_ store.OutboxEvent, done func(error)) error { go done(nil); return nil }, outbox.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := d.Start(ctx)
	b.Cleanup(func() {
		cancel()
		<-stopped
		_ = st.Close()
	})
	if _, err := svc.AddProject("proj-0"); err != nil {
		b.Fatal(err)
	}
	return &coreBench{st: st, tasks: svc, audit: aud}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run calls write(i) for i in [0, b.N) from 8 goroutines and reports the
// figures above.
func (c *coreBench) run(b *testing.B, write func(i int) error) {
	const writers = 8
	floorBefore := benchFloor(b)
	runtime.GC()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	commits0 := c.st.Commits()
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				if err := write(int(i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	commits := c.st.Commits() - commits0
	runtime.ReadMemStats(&ms1)
	floor := (floorBefore + benchFloor(b)) / 2
	n := float64(b.N)
	rate := n / elapsed.Seconds()
	b.ReportMetric(rate, "writes/s")
	b.ReportMetric(floor, "floor_commits/s")
	b.ReportMetric(rate/floor, "ratio_to_floor")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/write")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/write")
	b.ReportMetric(n/float64(max(commits, 1)), "writes/commit")
}
