package tasks

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// BenchmarkFlushAfterImport times writing the index entries an import left
// pending (docs/decisions.md D34: after `cairn import` of 100,000 tasks the next open
// wrote them all before it served): the bulk flush New and Close run, and
// the background flusher's, over the same fresh store of n pending tasks.
func BenchmarkFlushAfterImport(b *testing.B) {
	const n = 20_000
	for _, c := range []struct {
		name  string
		flush func(s *Service) error
	}{
		{"bulk", func(s *Service) error { return s.flushBulk(nil) }},
		{"background", func(s *Service) error { return s.FlushPending() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				svc := pendingStore(b, n)
				b.StartTimer()
				if err := c.flush(svc); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = svc.Store().Close()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/flush")
		})
	}
}

// pendingStore is a fresh store holding n tasks whose index entries are all
// pending, as an import leaves them.
func pendingStore(b *testing.B, n int) *Service {
	b.Helper()
	st, err := store.Open(filepath.Join(b.TempDir(), "core.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	t0 := benchT0
	svc := New(st, Config{Clock: func() time.Time { return t0 }})
	if _, err := svc.AddProject("imp"); err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		err := st.Update(func(tx kv.Tx) error {
			for i := lo; i < lo+batch && i < n; i++ {
				in := CreateInput{
					Title:       fmt.Sprintf("%s %s imported task %d", benchWords[i%len(benchWords)], benchWords[i*7%len(benchWords)], i),
					Description: ptr(fmt.Sprintf("Details about %s and %s, item %d.", benchWords[i*3%len(benchWords)], benchWords[i*5%len(benchWords)], i)),
					Project:     "imp",
				}
				if _, err := svc.createTx(tx, "bench", "", &in, 0, nil, t0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return svc
}
