package core

import (
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// BenchmarkImport100k imports 100,000 tasks (every status, sub-tasks,
// dependencies) into a fresh store, as `cairn import` does after parsing:
// the figure docs/performance.md reports (goal: under a minute). Beside
// the wall time it reports the CPU time the process spent, which other
// work on a shared machine does not inflate.
func BenchmarkImport100k(b *testing.B) {
	sample := importSample(100_000)
	for b.Loop() {
		b.StopTimer()
		_, svc := wired(b)
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime(b)
		out, err := svc.Import(tasks.Call{Actor: "bench"}, "imp", sample)
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		b.ReportMetric(wall.Seconds(), "s/import")
		b.ReportMetric((cpuTime(b) - cpu0).Seconds(), "cpu-s/import")
		b.ReportMetric(float64(out.Imported)/wall.Seconds(), "tasks/s")
	}
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
