package core

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// How far above where it started the heap of the core area may grow while
// it reads and checks 50 MB of JSON Lines whose last line is bad, and while
// it imports 50 MB. An import that held its input whole held it several
// times over (1.83 GB of RSS for 155 MB; here 78 MB of heap to refuse 50
// MB and 237 MB to import it). One that streams holds a compact plan
// (about 100 bytes a task: 5 MB here) while it reads, and while it writes
// one batch of 1,000 tasks, then one transaction of the postings of 1,024
// tasks while it indexes them (docs/decisions.md D41), whatever the
// input's size.
const (
	refuseHeapBound = 20 << 20
	importHeapBound = 128 << 20
)

// An import streams its input: the first pass over 50 MB of JSON Lines
// (about 50,000 tasks of 1 KB), which refuses a last line that is not JSON
// naming it before anything is written, keeps less than half of the
// input live, and importing the 50 MB keeps no more than one batch's worth
// beside the plan.
func TestImportStreams(t *testing.T) {
	// Not parallel: the heap it measures is the process's, and another
	// test's import beside it (TestImportInterruptedCompletesOnOpen
	// dumps two stores of 2,500 tasks) grew it by 50 MB now and then.
	if testing.Short() {
		t.Skip("imports 50 MB")
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.jsonl"), filepath.Join(dir, "bad.jsonl")
	n := writeJSONL(t, good, streamTestSize, "")
	writeJSONL(t, bad, streamTestSize, `{"task_id":"last","title":`)

	st, svc := wired(t)
	peak, err := heapPeak(func() error {
		_, err := importFile(tasks.Call{Actor: "op"}, svc, ImportInput{Path: bad, Project: "imp", IDsPath: filepath.Join(dir, "ids")})
		return err
	})
	e, ok := errs.As(err)
	if !ok || e.Status != 400 || e.Details["file"] != bad || e.Details["line"] != n+1 {
		t.Fatalf("want the last line (%d) refused, got %v", n+1, err)
	}
	t.Logf("the bad last line refused; heap grew by at most %.1f MB", float64(peak)/(1<<20))
	if peak > refuseHeapBound {
		t.Errorf("refusing the bad last line grew the heap by %d MB, more than %d MB: the input is not streamed", peak>>20, refuseHeapBound>>20)
	}
	if got := countAll(t, st); got != 0 {
		t.Fatalf("the refused import wrote %d tasks", got)
	}

	var out tasks.ImportOutput
	peak, err = heapPeak(func() error {
		var err error
		out, err = importFile(tasks.Call{Actor: "op"}, svc, ImportInput{Path: good, Project: "imp", IDsPath: filepath.Join(dir, "ids")})
		return err
	})
	if err != nil || out.Imported != n {
		t.Fatalf("imported %d of %d: %v", out.Imported, n, err)
	}
	t.Logf("%d tasks (%d MB) imported; heap grew by at most %.1f MB", n, streamTestSize>>20, float64(peak)/(1<<20))
	if peak > importHeapBound {
		t.Errorf("the import grew the heap by %d MB, more than %d MB: it does not stream", peak>>20, importHeapBound>>20)
	}
	if got := countAll(t, st); got != n {
		t.Fatalf("%d tasks in the store, want %d", got, n)
	}
	ids, err := os.ReadFile(filepath.Join(dir, "ids"))
	if err != nil || strings.Count(string(ids), "\n") != n {
		t.Fatalf("ids file: %d lines, %v", strings.Count(string(ids), "\n"), err)
	}
}

// heapPeak runs f and returns the most heap it kept live above where it
// started: every 50 ms a collection runs and what survives it is read. What
// an import keeps, not the garbage it makes between two collections, is
// what grows with its input when it does not stream.
func heapPeak(f func() error) (uint64, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
				peak.Store(ms.HeapAlloc - base)
			}
		}
	}()
	err := f()
	close(stop)
	<-stopped
	return peak.Load(), err
}

// writeJSONL writes about size bytes of tasks of about 1 KB, with parents
// and dependencies, then last when set, and returns how many tasks it
// wrote.
func writeJSONL(t *testing.T, path string, size int, last string) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	desc := strings.Repeat("An import streams its input and keeps a compact plan. ", 17)
	statuses := tasks.Statuses
	n, written := 0, 0
	for ; written < size; n++ {
		extra := ""
		if n >= 10 && n%10 == 4 {
			extra += fmt.Sprintf(`,"parent_id":"k%d"`, n-7)
		}
		if n >= 20 && n%7 == 3 {
			extra += fmt.Sprintf(`,"depends_on":["k%d","k%d"]`, n-13, n-20)
		}
		if statuses[n%len(statuses)] == tasks.StatusBlocked {
			extra += `,"blocked_reason":"waits on a vendor"`
		}
		k, _ := fmt.Fprintf(w, `{"task_id":"k%d","title":"task %d of a big import","description":%q,"status":%q,"labels":["big","l%d"]%s}`+"\n",
			n, n, desc, statuses[n%len(statuses)], n%7, extra)
		written += k
	}
	if last != "" {
		fmt.Fprintln(w, last)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// countAll counts the tasks of the store.
func countAll(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx kv.Tx) error {
		n = tx.Bucket([]byte(store.BucketTasks)).Count()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
