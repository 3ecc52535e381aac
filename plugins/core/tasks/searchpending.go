package tasks

import (
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Deferred trigram postings. A task's text has some sixty distinct
// trigrams, and its postings, keyed by trigram first, land on as many
// pages of the postings tree: written in the task's own transaction they
// were half the pages, bytes and time of a task_create. So a write records
// its task in the pending bucket (one key) and the postings of many pending
// tasks are written together, in one transaction that touches each page
// once, shortly after (the flusher below). PostgreSQL's GIN indexes keep a
// pending list for the same reason.
//
// Searches stay exact meanwhile: a pending task's postings may be stale,
// so the searches leave them out and check the task's search text (written
// with the task) instead; at most a flush's worth of tasks is pending.

var bucketPending = []byte(store.BucketTaskTrigramPending)

// A pending entry's value: pendingFresh when the task has no postings,
// pendingHeld followed by the text its postings hold (the title's length
// as a uvarint, the title, the searched text: description and source id).
const (
	pendingFresh byte = 0
	pendingHeld  byte = 1
)

func encodePending(held *record) []byte {
	if held == nil {
		return []byte{pendingFresh}
	}
	v := binary.AppendUvarint([]byte{pendingHeld}, uint64(len(held.title)))
	v = append(v, held.title...)
	return append(v, held.searched()...)
}

// decodePending returns the text a pending task's postings hold; nil when
// it has none (or the entry cannot be read: every posting is then
// rewritten, and a stale one left behind only costs a verification).
func decodePending(v []byte) *[2]string {
	if len(v) == 0 || v[0] != pendingHeld {
		return nil
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil
	}
	rest := v[1+w:]
	return &[2]string{string(rest[:n]), string(rest[n:])}
}

// pendingNums returns the pending task numbers in order.
func pendingNums(tx kv.Tx) []uint64 {
	pb := tx.Bucket(bucketPending)
	if !pb.Exists() {
		return nil
	}
	var out []uint64
	c := pb.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) == 8 {
			out = append(out, binary.BigEndian.Uint64(k))
		}
	}
	return out
}

// flushPending writes the postings of up to limit pending tasks and
// removes their entries; it returns how many it flushed.
func flushPending(tx kv.Tx, limit int) (int, error) {
	pb := tx.Bucket(bucketPending)
	if !pb.Exists() || !tx.Bucket([]byte(store.BucketTaskTrigrams)).Exists() {
		return 0, nil
	}
	type entry struct {
		key  []byte
		held *[2]string
	}
	var batch []entry
	c := pb.Cursor()
	for k, v := c.First(); k != nil && len(batch) < limit; k, v = c.Next() {
		batch = append(batch, entry{key: append([]byte(nil), k...), held: decodePending(v)})
	}
	tb := tasksBucket(tx)
	tc := tb.Cursor()
	lookup := func(key []byte) []byte { return seekExact(tc, key) }
	if tx.Shared() {
		// On PostgreSQL a seek is a round trip each, in a transaction every
		// other server's writers wait for: the batch's tasks are read in
		// one instead.
		keys := make([]kv.Key, len(batch))
		for i, e := range batch {
			keys[i] = kv.Key{Bucket: []byte(store.BucketTasks), Key: e.key}
		}
		tx.Prefetch(keys...)
		lookup = tb.Get
	}
	var raw rawRecord
	// The batch's postings are written together, in key order
	// (writePostings).
	ws := make([]postingWrite, 0, 64*len(batch))
	for _, e := range batch {
		if len(e.key) == 8 {
			num := binary.BigEndian.Uint64(e.key)
			if v := lookup(e.key); v != nil {
				if err := decodeRaw(num, v, &raw); err != nil {
					return 0, err
				}
				ws = trigramWrites(ws, num, e.held, string(raw.title), raw.searched())
			}
		}
		if err := pb.Delete(e.key); err != nil {
			return 0, err
		}
	}
	if err := writePostings(tx, ws); err != nil {
		return 0, err
	}
	return len(batch), nil
}

// mergeNums returns the union of two ascending lists, ascending.
func mergeNums(a, b []uint64) []uint64 {
	out := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

const (
	// flushBatch is how many pending tasks one flush transaction indexes:
	// enough that each page of the postings is written once for many
	// tasks, few enough that one flush stays a short transaction.
	flushBatch = 256
	// flushAfterWrites starts a flush once this many writes deferred
	// postings; flushIdle flushes what is left once writes pause. A
	// flush costs much the same for one task as for many (on a
	// 10,000-task store one create's entries alone wrote 590 KB, 64
	// creates' 17 KB each, BenchmarkCreateBytes in the audit package),
	// so the pause it waits for is longer than an agent's between two
	// writes, not a writer's between two calls (docs/decisions.md D46).
	// Meanwhile at most flushAfterWrites tasks are pending.
	flushAfterWrites = 64
	flushIdle        = 30 * time.Second
)

// trigramFlusher runs the flushes of one Service in the background.
type trigramFlusher struct {
	mu      sync.Mutex
	writes  int
	running bool
	closed  bool
	idle    *time.Timer
	done    sync.WaitGroup
}

// deferred notes a committed write that may have left postings or list
// entries pending.
func (s *Service) deferred() {
	f := &s.flusher
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.writes++
	if f.writes >= flushAfterWrites {
		s.startFlushLocked()
		return
	}
	if f.idle == nil {
		f.idle = time.AfterFunc(flushIdle, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if !f.closed {
				s.startFlushLocked()
			}
		})
	} else {
		f.idle.Reset(flushIdle)
	}
}

func (s *Service) startFlushLocked() {
	f := &s.flusher
	f.writes = 0
	if f.running {
		return
	}
	f.running = true
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		_ = s.FlushPending()
		f.mu.Lock()
		f.running = false
		again := f.writes >= flushAfterWrites && !f.closed
		if again {
			s.startFlushLocked()
		}
		f.mu.Unlock()
	}()
}

// FlushPending writes what writes deferred — the trigram postings and the
// task_list index entries (listpending.go) of every pending task — now,
// flushBatch tasks of each per transaction. The background flusher calls
// it; so does a test that wants the indexes in place.
func (s *Service) FlushPending() error {
	return s.flushEvery(flushBatch, nil)
}

// bulkFlushBatch is how many pending tasks one transaction of a bulk flush
// moves. A flush commits every page of the postings its tasks touch, and
// a task's sixty-odd trigrams touch as many pages, so fewer, larger
// transactions write far less: the 100,000 tasks an import left pending
// took 4.0 GB of page writes and 53 s in transactions of flushBatch tasks,
// 1.9 GB and 28 s in transactions of 1,024 (with the postings written in
// key order, writePostings), on a loaded two-core machine.
const bulkFlushBatch = 1024

// flushBulk writes everything pending in transactions of bulkFlushBatch
// tasks, telling report (when set) how far it is. New and Close use it:
// no call waits behind an opening or closing store's flush.
func (s *Service) flushBulk(report func(step string)) error {
	var each func(int)
	if report != nil {
		total := 0
		if err := s.st.View(func(tx kv.Tx) error {
			total = max(countKeys(tx.Bucket(bucketPending)), countKeys(tx.Bucket(bucketListPending)))
			return nil
		}); err != nil {
			return err
		}
		if total == 0 {
			return nil
		}
		done := 0
		report(fmt.Sprintf("writing the index entries of %d pending tasks", total))
		each = func(moved int) {
			done = min(done+moved, total)
			report(fmt.Sprintf("writing the index entries of %d pending tasks: %d done", total, done))
		}
	}
	return s.flushEvery(bulkFlushBatch, each)
}

// countKeys counts the keys of b (0 when it does not exist).
func countKeys(b kv.Bucket) int {
	if !b.Exists() {
		return 0
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// flushEvery moves every pending entry, batch tasks of each kind per
// transaction, telling each (when set) how many tasks each transaction
// moved.
func (s *Service) flushEvery(batch int, each func(moved int)) error {
	for {
		n, m := 0, 0
		// On PostgreSQL the flush runs beside other servers' writes: it
		// deletes every pending entry it moves, so two servers moving
		// one entry cannot both commit (the later runs again).
		// A bulk flush (after an import) is a transaction of many
		// changes: it goes into the file past the journal.
		update := s.st.UpdateShared
		if batch >= bulkFlushBatch {
			update = s.st.UpdateLargeShared
		}
		if err := update(func(tx kv.Tx) error {
			var err error
			if n, err = flushPending(tx, batch); err != nil {
				return err
			}
			m, err = flushListPending(tx, batch)
			return err
		}); err != nil {
			return err
		}
		if each != nil {
			each(max(n, m))
		}
		if n < batch && m < batch {
			return nil
		}
	}
}

// Close stops the background flusher, waits for a flush under way, and
// writes what is still pending, so a closed store holds every index entry.
func (s *Service) Close() error {
	f := &s.flusher
	f.mu.Lock()
	f.closed = true
	if f.idle != nil {
		f.idle.Stop()
	}
	f.mu.Unlock()
	f.done.Wait()
	if err := s.flushBulk(nil); err != nil {
		return err
	}
	return s.foldShards()
}

// foldShards adds this and every other server's counter shards into the
// counters (PostgreSQL), so readers sum only the shards of servers running
// since. It runs alone among the writers: a shared write could otherwise
// re-insert a shard this deleted, from a value it read before.
func (s *Service) foldShards() error {
	if s.st.Describe().Kind != "postgres" {
		return nil // no shards on bbolt, and no commit for nothing
	}
	return s.st.Update(foldCountShards)
}
