package resume

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// BenchmarkTaskContext measures task_context's brief in a store of
// 100,000 tasks for an agent holding three of them (each with four thought
// records and a lease), beside task_get in the same store: the brief reads
// through the agent's own indexes, so it costs a small multiple of one
// task_get whatever the store's size (docs/decisions.md D39).
// The same runs at 10,000 tasks: the two differ by little, since the
// brief's cost does not follow the store's size. (The sizes are
// sub-benchmarks so that make bench's '100k|10k' line, at three
// iterations, leaves this one to its own line.)
func BenchmarkTaskContext(b *testing.B) {
	b.Run("10k", func(b *testing.B) { benchContext(b, 10_000) })
	b.Run("100k", func(b *testing.B) { benchContext(b, 100_000) })
}

func benchContext(b *testing.B, n int) {
	src := open(b)
	// Seeding only: commits without fsync, so 100,000 creates take
	// seconds. The store is never reopened.
	src.Store.DB().NoSync = true
	for p := 1; p < 10; p++ {
		if _, err := src.Tasks.AddProject(fmt.Sprintf("proj-%d", p)); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	var mine []string
	// Sixteen writers, so the store's group commit batches their creates.
	const writers = 16
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += writers {
				project := "web"
				if i%10 > 0 {
					project = fmt.Sprintf("proj-%d", i%10)
				}
				in := tasks.CreateInput{Title: fmt.Sprintf("task %d", i), Project: project}
				if i%2 == 0 {
					in.Assignee = ptr(fmt.Sprintf("agent-%d", i%5))
				}
				out, err := src.Tasks.Create("lead", in)
				if err == nil && i%3 == 0 {
					_, err = src.Tasks.Update("lead", tasks.UpdateInput{TaskID: out.TaskID, Status: ptr("todo")})
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		mine = append(mine, claimed(b, src, "resumer", fmt.Sprintf("held %d", i), "high"))
	}
	for _, id := range mine {
		for j := 0; j < 4; j++ {
			if _, err := src.Audit.Record("resumer", audit.RecordInput{TaskID: id, Type: "decision", Content: fmt.Sprintf("decision %d on %s", j, id)}); err != nil {
				b.Fatal(err)
			}
		}
		lease(b, src, leases.EventIssued, "L-"+id, id, time.Now().Add(time.Hour))
	}
	if err := src.Tasks.FlushPending(); err != nil {
		b.Fatal(err)
	}
	src.Store.DB().NoSync = false
	fmt.Fprintf(os.Stderr, "bench fixture: %d tasks built in %v\n", n, time.Since(start).Round(time.Millisecond))

	get := func() {
		if _, err := src.Tasks.Get(tasks.GetInput{TaskID: mine[1]}); err != nil {
			b.Fatal(err)
		}
	}
	brief := func() Brief {
		out, err := Build(src.Sources, Input{Agent: "resumer", Project: "web"})
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	if out := brief(); len(out.Tasks) != 3 || len(out.Leases) != 3 {
		b.Fatalf("brief: %d tasks, %d leases", len(out.Tasks), len(out.Leases))
	}
	b.Run("task_get", func(b *testing.B) {
		for b.Loop() {
			get()
		}
	})
	b.Run("task_context", func(b *testing.B) {
		const gets = 2000
		t0 := time.Now()
		for range gets {
			get()
		}
		perGet := float64(time.Since(t0).Nanoseconds()) / gets
		var size int
		for b.Loop() {
			size = brief().Bytes
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/perGet, "x_task_get")
		b.ReportMetric(float64(size), "bytes")
	})
}
