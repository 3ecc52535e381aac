package core

import (
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// BenchmarkImport100k imports 100,000 tasks (every status, sub-tasks,
// dependencies) into a fresh store, as `cairn import` does after parsing:
// the figure docs/performance.md reports (goal: under a minute).
func BenchmarkImport100k(b *testing.B) {
	sample := importSample(100_000)
	for b.Loop() {
		b.StopTimer()
		_, svc := wired(b)
		b.StartTimer()
		start := time.Now()
		out, err := svc.Import(tasks.Call{Actor: "bench"}, "imp", sample)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/import")
		b.ReportMetric(float64(out.Imported)/time.Since(start).Seconds(), "tasks/s")
	}
}
