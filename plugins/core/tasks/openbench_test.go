package tasks

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// BenchmarkOpen100k measures what a core area does between its spawn and
// its first answer on a settled 100,000-task store, phase by phase: the
// page walk that guards bbolt (boltcheck.Inspect, part of the store's
// open, timed alone first), the store's open, New (the index checks and
// what an earlier process left pending) and the first task_list. A store
// a crashed process left holds no freelist, which the open rebuilds by
// reading every page; one a process closed holds it (docs/decisions.md
// D46).
func BenchmarkOpen100k(b *testing.B) {
	src := benchService(b, 100_000).Store().Path()
	for _, closed := range []bool{false, true} {
		name := "left_by_a_crash"
		if closed {
			name = "closed"
		}
		b.Run(name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "core.db")
			copyFile(b, src, path) // the fixture is open: as a crash leaves it
			if closed {
				st, err := store.Open(path, store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var inspect, open, newSvc, first time.Duration
			for b.Loop() {
				if !closed {
					b.StopTimer()
					copyFile(b, src, path)
					b.StartTimer()
				}
				t0 := time.Now()
				if _, _, err := boltcheck.Inspect(path); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				st, err := store.Open(path, store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				svc := New(st, Config{})
				if err := svc.IndexError(); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				if _, err := svc.List(ListInput{}); err != nil {
					b.Fatal(err)
				}
				t4 := time.Now()
				inspect += t1.Sub(t0)
				open += t2.Sub(t1)
				newSvc += t3.Sub(t2)
				first += t4.Sub(t3)
				if err := svc.Close(); err != nil {
					b.Fatal(err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(inspect.Milliseconds())/n, "inspect_ms")
			b.ReportMetric(float64(open.Milliseconds())/n, "store_open_ms")
			b.ReportMetric(float64(newSvc.Microseconds())/n/1000, "new_ms")
			b.ReportMetric(float64(first.Microseconds())/n/1000, "first_list_ms")
		})
	}
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
