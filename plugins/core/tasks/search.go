package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// The search index. D9's search is substring matching: every
// lower-cased term must occur in the lower-cased title or description. A
// term of three bytes or more occurs only where each of its byte trigrams
// occurs; with each posting holding its trigram's positions, the term's
// matches follow exactly from its trigrams' postings (searchexact.go), and
// only short terms fall back to a scan. The index holds the trigrams of
// strings.ToLower(title) and strings.ToLower(description), the same folding
// the match uses.

var metaTrigramsBuilt = []byte("trigrams_built")

// metaTrigramsUpto is the next task number a search index build will
// index; present only while a build is under way.
var metaTrigramsUpto = []byte("trigrams_upto")

// lowerText folds like containsFold: ASCII in place, other text through
// strings.ToLower.
func lowerText(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.ToLower(s)
		}
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// trigramPositions returns, per distinct byte trigram of the folded title
// and description, its posting value: the trigram's start offsets in the
// search text's joined form (title, newline, description) as uvarint
// deltas. No trigram spans the newline: a term holds no whitespace.
func trigramPositions(title, description string) map[[3]byte][]byte {
	out := map[[3]byte][]byte{}
	last := map[[3]byte]int{}
	add := func(s string, base int) {
		for i := 0; i+3 <= len(s); i++ {
			g := [3]byte{s[i], s[i+1], s[i+2]}
			p := base + i
			out[g] = binary.AppendUvarint(out[g], uint64(p-last[g]))
			last[g] = p
		}
	}
	t := lowerText(title)
	add(t, 0)
	add(lowerText(description), len(t)+1)
	return out
}

// trigramKey writes the posting key of trigram g for task num into k.
func trigramKey(k *[11]byte, g [3]byte, num uint64) []byte {
	copy(k[:], g[:])
	binary.BigEndian.PutUint64(k[3:], num)
	return k[:]
}

// indexText updates the trigram postings of task num from its old text
// (prev nil: a new task) to rec's, and its search text: at once where index
// entries are not deferred, else when its pending entry (deferIndexes,
// which every task write calls) is moved.
func indexText(tx kv.Tx, rec, prev *record) error {
	if !defersEntries(tx) {
		if err := indexSearchText(tx, rec); err != nil {
			return err
		}
	}
	return indexTrigrams(tx, rec, prev)
}

// indexTrigrams brings the trigram postings of task rec.num up to rec's
// text: it records the task as pending (searchpending.go), and a flush
// writes the postings of many pending tasks in one transaction later.
func indexTrigrams(tx kv.Tx, rec, prev *record) error {
	if prev != nil && prev.title == rec.title && prev.searched() == rec.searched() {
		return nil
	}
	if !tx.Bucket([]byte(store.BucketTaskTrigrams)).Exists() {
		return nil // a store opened read-only by an older layout's tooling
	}
	pb := tx.Bucket(bucketPending)
	if !pb.Exists() {
		var old *[2]string
		if prev != nil {
			old = &[2]string{prev.title, prev.searched()}
		}
		return writeTrigrams(tx, rec.num, old, rec.title, rec.searched())
	}
	key := store.U64(rec.num)
	if pb.Get(key) != nil {
		return nil // already pending: its entry names the text the postings hold
	}
	return pb.Put(key, encodePending(prev))
}

// writeTrigrams makes the postings of task num those of (title,
// description), given that they are now those of old (nil: the task has
// none, or whatever it has is overwritten). A posting's value holds the
// trigram's positions; an empty value (written by a build from before
// positions) says only that the trigram occurs, and a search verifies such
// a task against its search text.
func writeTrigrams(tx kv.Tx, num uint64, old *[2]string, title, description string) error {
	return writePostings(tx, trigramWrites(nil, num, old, title, description))
}

// postingWrite is one change to the postings: a put of val, or a delete.
type postingWrite struct {
	key [11]byte
	val []byte
	del bool
}

// trigramWrites appends to ws the changes writeTrigrams makes.
func trigramWrites(ws []postingWrite, num uint64, old *[2]string, title, description string) []postingWrite {
	now := trigramPositions(title, description)
	var before map[[3]byte][]byte
	if old != nil {
		before = trigramPositions(old[0], old[1])
		for g := range before {
			if _, keep := now[g]; !keep {
				w := postingWrite{del: true}
				trigramKey(&w.key, g, num)
				ws = append(ws, w)
			}
		}
	}
	for g, v := range now {
		if o, ok := before[g]; ok && bytes.Equal(o, v) {
			continue
		}
		w := postingWrite{val: v}
		trigramKey(&w.key, g, num)
		ws = append(ws, w)
	}
	return ws
}

// writePostings applies ws in key order. bbolt splits a node only when
// its transaction commits, so postings inserted out of order into a
// node that grows meanwhile move its tail each time: a flush of 2,048
// imported tasks into an empty index (120,000 postings) spent most of its
// time in those moves. In key order each insert lands after the last.
func writePostings(tx kv.Tx, ws []postingWrite) error {
	b := tx.Bucket([]byte(store.BucketTaskTrigrams))
	slices.SortFunc(ws, func(a, c postingWrite) int { return bytes.Compare(a.key[:], c.key[:]) })
	for i := range ws {
		w := &ws[i]
		var err error
		if w.del {
			err = b.Delete(w.key[:])
		} else {
			err = b.Put(w.key[:], w.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// indexStoredText writes the postings of a stored task during a build; a
// task pending meanwhile now has the postings of its current text, which
// its pending entry records.
func indexStoredText(tx kv.Tx, raw *rawRecord) error {
	title, description := string(raw.title), raw.searched()
	if err := writeTrigrams(tx, raw.num, nil, title, description); err != nil {
		return err
	}
	pb := tx.Bucket(bucketPending)
	if !pb.Exists() {
		return nil
	}
	key := store.U64(raw.num)
	if pb.Get(key) == nil {
		return nil
	}
	return pb.Put(key, encodePending(&record{title: title, description: description}))
}

// rebuildBatch is how many tasks one rebuild transaction indexes. bbolt
// splits nodes only at commit, so one transaction inserting millions of
// postings would grow its nodes without bound and slow down quadratically;
// small transactions keep every insert cheap.
var rebuildBatch = 256

// ensureSearchIndex builds the trigram index and the search text when this
// store has not built them yet (a store written before they existed). It empties the index,
// then indexes the stored tasks in batches and marks the index built in the
// last batch's transaction. Writes made meanwhile keep the postings of the
// tasks they touch themselves, so the result is the same as one rebuild.
// Progress lives in meta (trigrams_upto), read inside each batch's
// transaction, so servers opening one database at once share the build
// instead of emptying each other's work.
func (s *Service) ensureSearchIndex() error {
	if err := s.ensureTrigrams(); err != nil {
		return err
	}
	if err := s.ensureTrigramPositions(); err != nil {
		return err
	}
	return s.ensureSearchText()
}

// metaPositionsBuilt marks every posting as carrying its positions;
// metaPositionsUpto is the next task number the positions build rewrites,
// present only while it is under way.
var (
	metaPositionsBuilt = []byte("trigram_positions_built")
	metaPositionsUpto  = []byte("trigram_positions_upto")
)

// ensureTrigramPositions rewrites the postings of every stored task with
// their positions when the index was built before postings carried them.
// It only overwrites values, never membership, so searches stay exact
// meanwhile (an empty value is verified against the search text) and a
// server of the previous release writing beside it stays correct too.
func (s *Service) ensureTrigramPositions() error {
	built := false
	if err := s.st.View(func(tx kv.Tx) error {
		built = tx.Bucket([]byte(store.BucketMeta)).Get(metaPositionsBuilt) != nil
		return nil
	}); err != nil || built {
		return err
	}
	return s.indexStoredTasks(metaPositionsBuilt, metaPositionsUpto, indexStoredText)
}

// ensureTrigrams builds the trigram postings; see ensureSearchIndex.
func (s *Service) ensureTrigrams() error {
	built := false
	if err := s.st.View(func(tx kv.Tx) error {
		built = tx.Bucket([]byte(store.BucketMeta)).Get(metaTrigramsBuilt) != nil
		return nil
	}); err != nil || built {
		return err
	}
	if err := s.st.Update(func(tx kv.Tx) error {
		meta := tx.Bucket([]byte(store.BucketMeta))
		if meta.Get(metaTrigramsBuilt) != nil || meta.Get(metaTrigramsUpto) != nil {
			return nil // built, or being built by another server
		}
		if err := tx.Clear([]byte(store.BucketTaskTrigrams)); err != nil {
			return err
		}
		// This build writes positions itself.
		if err := meta.Put(metaPositionsBuilt, []byte{1}); err != nil {
			return err
		}
		return meta.Put(metaTrigramsUpto, store.U64(1))
	}); err != nil {
		return err
	}
	return s.indexStoredTasks(metaTrigramsBuilt, metaTrigramsUpto, indexStoredText)
}

// indexStoredTasks runs index over the stored tasks from the number in
// meta's upto key on (1 when absent), rebuildBatch tasks per transaction,
// recording progress in upto, and marks the index built in the last
// batch's transaction. Progress read inside each batch's transaction lets
// servers opening one database at once share the work.
func (s *Service) indexStoredTasks(built, upto []byte, index func(tx kv.Tx, raw *rawRecord) error) error {
	for done := false; !done; {
		err := s.st.UpdateLarge(func(tx kv.Tx) error {
			meta := tx.Bucket([]byte(store.BucketMeta))
			if meta.Get(built) != nil {
				done = true
				return nil
			}
			from := meta.Get(upto)
			if from == nil {
				from = store.U64(1)
			}
			var raw rawRecord
			c := tasksBucket(tx).Cursor()
			n := 0
			k, v := c.Seek(from)
			for ; k != nil && n < rebuildBatch; k, v = c.Next() {
				if len(k) != 8 {
					continue
				}
				num := binary.BigEndian.Uint64(k)
				if err := decodeRaw(num, v, &raw); err != nil {
					return err
				}
				if err := index(tx, &raw); err != nil {
					return err
				}
				if err := meta.Put(upto, store.U64(num+1)); err != nil {
					return err
				}
				n++
			}
			if k != nil {
				return nil
			}
			done = true
			if err := meta.Delete(upto); err != nil {
				return err
			}
			return meta.Put(built, []byte{1})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// searchCandidates returns, in number order, the tasks that hold every
// trigram of every term of three bytes or more, and ok = false when the
// index cannot narrow the search (not built, or only short terms).
func searchCandidates(tx kv.Tx, terms []string) ([]uint64, bool) {
	nums, ok := candidatesIndexed(tx, terms)
	if !ok {
		return nil, false
	}
	// Candidates are checked against the query: the tasks whose postings
	// are pending join them.
	return mergeNums(nums, pendingNums(tx)), true
}

// candidatesIndexed is searchCandidates over the written postings alone.
func candidatesIndexed(tx kv.Tx, terms []string) ([]uint64, bool) {
	if tx.Bucket([]byte(store.BucketMeta)).Get(metaTrigramsBuilt) == nil {
		return nil, false
	}
	b := tx.Bucket([]byte(store.BucketTaskTrigrams))
	var grams [][3]byte
	seen := map[[3]byte]bool{}
	for _, t := range terms {
		for i := 0; i+3 <= len(t); i++ {
			g := [3]byte{t[i], t[i+1], t[i+2]}
			if !seen[g] {
				seen[g] = true
				grams = append(grams, g)
			}
		}
	}
	if len(grams) == 0 {
		return nil, false
	}
	// Drive from the trigram with the fewest postings; counting stops at
	// the smallest count seen so far, so common trigrams cost little.
	c := b.Cursor()
	count := func(g [3]byte, limit int) int {
		n := 0
		for k, _ := c.Seek(g[:]); k != nil && bytes.HasPrefix(k, g[:]) && n < limit; k, _ = c.Next() {
			n++
		}
		return n
	}
	// When even the rarest trigram is in more than an eighth of the tasks,
	// point lookups per candidate cost more than one sequential scan.
	scanCheaper := max(64, int(store.PeekID(tx, store.CounterTask)/8))
	best, bestN := 0, scanCheaper
	for i, g := range grams {
		if n := count(g, bestN); n < bestN {
			best, bestN = i, n
		}
	}
	if bestN >= scanCheaper {
		return nil, false
	}
	var out []uint64
	var probes []*cursorProbe
	for i, g := range grams {
		if i != best {
			probes = append(probes, newCursorProbe(b, g[:]))
		}
	}
	for k, _ := c.Seek(grams[best][:]); k != nil && bytes.HasPrefix(k, grams[best][:]); k, _ = c.Next() {
		if len(k) != 11 {
			continue
		}
		num := binary.BigEndian.Uint64(k[3:])
		all := true
		for _, p := range probes {
			if _, ok := p.find(num); !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, num)
		}
	}
	return out, true
}
