package audit

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// BenchmarkCreateBytes is where a task_create's bytes go on a store of
// 10,000 tasks, wired as the core plugin wires it (the chain, the outbox and
// its drainer, a key the host derived for the call): bytes bbolt writes per
// create, its own commit's and every commit's (the background flushes of
// deferred index entries included), and the pages each bucket has written
// per create (a page of a bucket's tree that is new or changed after the
// commit; "(root)" is the top-level tree that holds the buckets'
// headers). status_change is a task_update of the status beside them. The
// breakdown is printed with -v; run it with -benchtime=100x. With the
// journal (docs/decisions.md D47) a commit writes no page of the file: its
// record is in KB-wchar (all bytes this process handed to write(2)), and
// the pages are the checkpoints', which the flushes here run.
// pagesWritten counts pwrites of a page (the meta page's included), which
// is how the KB figures are reckoned: 4 KiB each.
func BenchmarkCreateBytes(b *testing.B) {
	c := newCoreBench(b)
	in := make([]importer.Task, 10_000)
	for i := range in {
		d := fmt.Sprintf("details of task %d: cache, login and parser", i)
		in[i] = importer.Task{Key: fmt.Sprint(i), Title: fmt.Sprintf("task %d refactor the store metrics", i), Description: &d, Status: []string{"todo", "in_progress", "done", "backlog"}[i%4]}
	}
	if _, err := c.tasks.Import(tasks.Call{Actor: "seed"}, "proj-0", in); err != nil {
		b.Fatal(err)
	}
	if err := c.tasks.FlushPending(); err != nil {
		b.Fatal(err)
	}
	poll.Until(b, time.Minute, "the import's events to drain", func() bool {
		n, err := c.st.PendingEvents()
		if err != nil {
			b.Fatal(err)
		}
		return n == 0
	})
	db := c.st.DB()
	// A few creates first, so the derived idempotency ring's window and
	// the outbox are as in a store in use.
	create := func(i int) {
		k := idempotency.Key{Key: fmt.Sprintf("session-%d:%d", i%3, i)}.For("task_create", fmt.Appendf(nil, `{"title":"new task %d"}`, i))
		if _, err := c.tasks.CreateFor(tasks.Call{Actor: "bench", Idem: k}, tasks.CreateInput{Title: fmt.Sprintf("new task %d", i), Project: "proj-0", Description: ptrTo("what the agent wants done, in a sentence or two")}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		create(-1 - i)
	}
	b.Run("own_commit", func(b *testing.B) {
		// Deferred entries are flushed before each create (not timed), so
		// the pages compared are the create's own commit's.
		pages := pageCounter{}
		var own, wchar int64
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			flush(b, c)
			pages.start(b, db)
			before, w := pagesWritten(db), procWchar(b)
			b.StartTimer()
			create(i)
			b.StopTimer()
			own += pagesWritten(db) - before
			wchar += procWchar(b) - w
			pages.count(b, db)
			b.StartTimer()
		}
		b.ReportMetric(float64(own)*4/float64(b.N), "KB/create")
		b.ReportMetric(float64(wchar)/1024/float64(b.N), "KB-wchar/create")
		pages.log(b, "pages of each bucket a create's own commit writes", b.N)
	})
	b.Run("lone", func(b *testing.B) {
		// A create followed by the flush of its own deferred entries:
		// what a create costs when the background flush finds it alone,
		// as it did after each create of an agent that pauses between
		// them (docs/decisions.md D46).
		pages := pageCounter{}
		var all, wchar int64
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			pages.start(b, db)
			before, w := pagesWritten(db), procWchar(b)
			b.StartTimer()
			create(1_000_000 + i)
			flush(b, c)
			b.StopTimer()
			all += pagesWritten(db) - before
			wchar += procWchar(b) - w
			pages.count(b, db)
			b.StartTimer()
		}
		b.ReportMetric(float64(all)*4/float64(b.N), "KB/create")
		b.ReportMetric(float64(wchar)/1024/float64(b.N), "KB-wchar/create")
		pages.log(b, "pages of each bucket a create and the flush of its entries write", b.N)
	})
	b.Run("batch_64", func(b *testing.B) {
		// 64 creates and the flush of their deferred entries, the batch
		// the background flush takes from a writer that keeps writing
		// (it may take part of them itself, at its own moment).
		pages := pageCounter{}
		var all, wchar int64
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			pages.start(b, db)
			before, w := pagesWritten(db), procWchar(b)
			b.StartTimer()
			for j := 0; j < 64; j++ {
				create(2_000_000 + 64*i + j)
			}
			flush(b, c)
			b.StopTimer()
			all += pagesWritten(db) - before
			wchar += procWchar(b) - w
			pages.count(b, db)
			b.StartTimer()
		}
		b.ReportMetric(float64(all)*4/float64(64*b.N), "KB/create")
		b.ReportMetric(float64(wchar)/1024/float64(64*b.N), "KB-wchar/create")
		// The index buckets' figures are the flush's own; a page of the
		// others that several creates wrote counts once.
		pages.log(b, "pages of each bucket 64 creates and their flush write, per create", 64*b.N)
	})
	b.Run("status_change", func(b *testing.B) {
		// A status change of a task of the fixture (todo ⇄ in_progress),
		// its own commit alone: it moves every task_list entry of the
		// task, which the flush after it writes (not counted here).
		pages := pageCounter{}
		var own int64
		started := map[uint64]bool{}
		var wchar int64
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			flush(b, c)
			n := uint64(1 + 4*((i*7919)%2_500)) // every fourth task is in todo
			status := "in_progress"
			if started[n] {
				status = "todo"
			}
			started[n] = !started[n]
			pages.start(b, db)
			before, w := pagesWritten(db), procWchar(b)
			b.StartTimer()
			k := idempotency.Key{Key: fmt.Sprintf("session-0:update-%d", i)}.For("task_update", fmt.Appendf(nil, `{"status":%q}`, status))
			if _, err := c.tasks.UpdateFor(tasks.Call{Actor: "bench", Idem: k}, tasks.UpdateInput{TaskID: tasks.FormatTaskID(n), Status: &status}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			own += pagesWritten(db) - before
			wchar += procWchar(b) - w
			pages.count(b, db)
			b.StartTimer()
		}
		b.ReportMetric(float64(own)*4/float64(b.N), "KB/update")
		b.ReportMetric(float64(wchar)/1024/float64(b.N), "KB-wchar/update")
		pages.log(b, "pages of each bucket a status change's own commit writes", b.N)
	})
	b.Run("back_to_back", func(b *testing.B) {
		// One writer creating as fast as it can: the creates' own
		// commits, the outbox removals riding them, the background
		// flushes, and the flush of what is left at the end; the bytes
		// this process handed to write(2) besides (/proc/self/io).
		start, wchar := pagesWritten(db), procWchar(b)
		for i := 0; b.Loop(); i++ {
			create(3_000_000 + i)
		}
		b.StopTimer()
		flush(b, c)
		b.ReportMetric(float64(pagesWritten(db)-start)*4/float64(b.N), "KB/create")
		b.ReportMetric(float64(procWchar(b)-wchar)/1024/float64(b.N), "KB-wchar/create")
	})
}

// flush writes the deferred index entries and checkpoints the journal
// (docs/decisions.md D47), so that the file holds every commit so far.
func flush(b *testing.B, c *coreBench) {
	b.Helper()
	if err := c.tasks.FlushPending(); err != nil {
		b.Fatal(err)
	}
	if err := c.st.Checkpoint(); err != nil {
		b.Fatal(err)
	}
}

// pageCounter adds up, per bucket, the pages that commits wrote between
// start and count.
type pageCounter struct {
	prev     map[uint64]pageInfo
	byBucket map[string]int
}

func (p *pageCounter) start(b *testing.B, db *bolt.DB) { p.prev = bucketPages(b, db) }

// count adds the pages of each bucket's tree that are new or changed since
// start: written by a commit in between.
func (p *pageCounter) count(b *testing.B, db *bolt.DB) {
	if p.byBucket == nil {
		p.byBucket = map[string]int{}
	}
	for id, pi := range bucketPages(b, db) {
		if old, ok := p.prev[id]; !ok || old != pi {
			p.byBucket[pi.bucket] += pi.pages
		}
	}
}

func (p *pageCounter) log(b *testing.B, what string, writes int) {
	logByBucket(b, what, p.byBucket, writes)
}

// logByBucket logs pages per write of each bucket, most first.
func logByBucket(b *testing.B, what string, byBucket map[string]int, writes int) {
	names := make([]string, 0, len(byBucket))
	total := 0
	for name, n := range byBucket {
		names = append(names, name)
		total += n
	}
	slices.SortFunc(names, func(x, y string) int { return byBucket[y] - byBucket[x] })
	var lines []string
	for _, name := range names {
		lines = append(lines, fmt.Sprintf("%-28s %6.2f", name, float64(byBucket[name])/float64(writes)))
	}
	b.Logf("%s (%d writes; %.2f in all, the meta page aside):\n%s", what, writes, float64(total)/float64(writes), strings.Join(lines, "\n"))
}

// procWchar is the bytes this process has handed to write(2) and its
// kin so far (/proc/self/io).
func procWchar(b *testing.B) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skip("no /proc/self/io:", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Skip("no wchar in /proc/self/io")
	return 0
}

func ptrTo[T any](v T) *T { return &v }

// pageInfo is one page of a bucket's tree as bucketPages read it.
type pageInfo struct {
	bucket string
	hash   uint64
	pages  int // 1 + its overflow
}

// bucketPages reads the bbolt file at path and returns every branch and
// leaf page reachable from the newest meta page, by page id, with the
// bucket whose tree holds it and a hash of its bytes (bbolt's on-disk
// format, as internal/boltcheck reads it).
func bucketPages(b *testing.B, db *bolt.DB) map[uint64]pageInfo {
	b.Helper()
	// A read transaction keeps its pages from reuse while the file is
	// read: a commit running meanwhile writes elsewhere.
	tx, err := db.Begin(false)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	file, err := os.ReadFile(db.Path())
	if err != nil {
		b.Fatal(err)
	}
	ne := binary.NativeEndian
	const header = 16
	pageSize := int(ne.Uint32(file[header+8:]))
	meta := func(i int) []byte { return file[i*pageSize:] }
	m := meta(0)
	if ne.Uint64(meta(1)[header+48:]) == uint64(tx.ID()) {
		m = meta(1)
	}
	out := map[uint64]pageInfo{}
	var walk func(id uint64, bucket string)
	walk = func(id uint64, bucket string) {
		p := file[int(id)*pageSize:]
		n := 1 + int(ne.Uint32(p[12:]))
		p = p[:n*pageSize]
		h := fnv.New64a()
		h.Write(p)
		out[id] = pageInfo{bucket: bucket, hash: h.Sum64(), pages: n}
		flags, count := ne.Uint16(p[8:]), int(ne.Uint16(p[10:]))
		for i := 0; i < count; i++ {
			e := p[header+16*i:]
			if flags == 0x01 { // branch
				walk(ne.Uint64(e[8:]), bucket)
				continue
			}
			if ne.Uint32(e)&0x01 == 0 { // a key, not a bucket
				continue
			}
			pos, ksize := int(ne.Uint32(e[4:])), int(ne.Uint32(e[8:]))
			key := e[pos : pos+ksize]
			if root := ne.Uint64(e[pos+ksize:]); root != 0 {
				name := string(key)
				if bucket != "(root)" {
					name = bucket + "/" + name
				}
				walk(root, name)
			}
		}
	}
	walk(ne.Uint64(m[header+16:]), "(root)")
	return out
}
