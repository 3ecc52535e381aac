package audit

import (
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// pagesWritten is how many pages db's commits have written so far.
func pagesWritten(db *bolt.DB) int64 {
	st := db.Stats().TxStats
	return st.GetWrite()
}

// BenchmarkWritePages counts the bbolt pages one agent's writes commit on a
// store of 10,000 tasks imported with their chains and events, the core's
// trail wired as the plugin wires it: pages written by the write's own
// commit, and pages per write over every commit including the background
// flushes of deferred index entries. Each page is one pwrite of 4 KiB, and
// the fdatasync after them waits for all. Each write is followed by the
// floor, a durable one-key bbolt update on the same disk, and both are
// reported at p50 with their ratio: what the store's write costs before
// any process hop.
func BenchmarkWritePages(b *testing.B) {
	c := newCoreBench(b)
	in := make([]importer.Task, 10_000)
	for i := range in {
		d := fmt.Sprintf("details of task %d: cache, login and parser", i)
		in[i] = importer.Task{Key: fmt.Sprint(i), Title: fmt.Sprintf("task %d refactor the store metrics", i), Description: &d, Status: []string{"todo", "in_progress", "done", "backlog"}[i%4]}
	}
	if _, err := c.tasks.Import(tasks.Call{Actor: "seed"}, "proj-0", in); err != nil {
		b.Fatal(err)
	}
	c.tasks.FlushPending()
	// The import's events drain first, as they would before the writes
	// of a store in use.
	poll.Until(b, time.Minute, "the import's events to drain", func() bool {
		n, err := c.st.PendingEvents()
		if err != nil {
			b.Fatal(err)
		}
		return n == 0
	})
	db := c.st.DB()
	started := map[uint64]bool{}
	writes := map[string]func(i int) error{
		"task_create": func(i int) error {
			_, err := c.tasks.CreateFor(tasks.Call{Actor: "bench", Idem: idempotency.Key{Key: fmt.Sprint("create-", i)}}, tasks.CreateInput{Title: fmt.Sprintf("new task %d", i), Project: "proj-0"})
			return err
		},
		// A todo task (every fourth) to in_progress, and back the next
		// time it comes round.
		"task_update_status": func(i int) error {
			n := uint64(1 + 4*((i*7919)%2_500))
			status := "in_progress"
			if started[n] {
				status = "todo"
			}
			started[n] = !started[n]
			_, err := c.tasks.UpdateFor(tasks.Call{Actor: "bench", Idem: idempotency.Key{Key: fmt.Sprint("update-", i)}}, tasks.UpdateInput{TaskID: tasks.FormatTaskID(n), Status: &status})
			return err
		},
	}
	floor := floorDB(b)
	for _, name := range []string{"task_create", "task_update_status"} {
		write := writes[name]
		b.Run(name, func(b *testing.B) {
			var own int64
			var took, floorTook []time.Duration
			start := pagesWritten(db)
			for i := 0; b.Loop(); i++ {
				before := pagesWritten(db)
				t0 := time.Now()
				if err := write(i); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
				own += pagesWritten(db) - before
				t0 = time.Now()
				if err := floorPut(floor, i); err != nil {
					b.Fatal(err)
				}
				floorTook = append(floorTook, time.Since(t0))
			}
			c.tasks.FlushPending()
			// Every commit of the run, the flushes included (and any
			// outbox removal that got a commit of its own).
			all := pagesWritten(db) - start
			b.ReportMetric(float64(own)/float64(b.N), "pages/commit")
			b.ReportMetric(float64(all)/float64(b.N), "pages/write")
			w, f := median(took), median(floorTook)
			b.ReportMetric(float64(w.Microseconds()), "µs-p50/write")
			b.ReportMetric(float64(f.Microseconds()), "µs-p50/floor")
			b.ReportMetric(float64(w)/float64(f), "x-floor")
		})
	}
}

// floorDB is a bbolt file beside the store, on the same disk, for the
// floor: one durable one-key update, taken after each measured write.
func floorDB(b *testing.B) *bolt.DB {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

func floorPut(db *bolt.DB, i int) error {
	return db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("floor"))
		if err != nil {
			return err
		}
		return bk.Put([]byte("key"), fmt.Appendf(nil, "value %d padded to a typical record size ....", i))
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
