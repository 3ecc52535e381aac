package tasks

import (
	"bytes"
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// listSearchText answers a search from the search text: among nums (when
// have) or every task, it keeps the tasks whose entry passes q's project,
// status, priority, creation-time and search filters, reads the task only
// when q also filters on assignee or label, and sorts on the entry's key —
// so total_count is exact and only the page's tasks are decoded.
func listSearchText(tx kv.Tx, q *listQuery, out *ListOutput, nums []uint64, have bool) error {
	_, statuses, priorities := q.cells()
	var statusOK, priorityOK [256]bool
	for _, s := range statuses {
		statusOK[s] = true
	}
	for _, p := range priorities {
		priorityOK[p] = true
	}
	terms := make([][]byte, len(q.terms))
	for i, t := range q.terms {
		terms[i] = []byte(t)
	}
	needTask := q.assignee != nil || q.label != nil
	tc := tasksBucket(tx).Cursor()
	var raw rawRecord
	var hits []hit
	check := func(num uint64, v []byte) error {
		e, ok := decodeSearchEntry(num, v)
		if !ok {
			return errCorrupt
		}
		if !statusOK[e.status] || !priorityOK[e.priority] || !q.createdIn(e.createdMs) ||
			(q.project != "" && string(e.project) != q.project) || !textMatches(e.text, terms) {
			return nil
		}
		if needTask {
			if err := decodeRaw(num, seekExact(tc, store.U64(num)), &raw); err != nil {
				return err
			}
			if !q.match(&raw) {
				return nil
			}
		}
		hits = append(hits, hit{num: num, key: q.memberKey(&e.member)})
		return nil
	}
	b := tx.Bucket([]byte(store.BucketTaskSearchText))
	if have {
		p := newCursorProbe(b, nil)
		// Search text entries are keyed by every task number and a step
		// within a page costs a fraction of a seek; 24 measured best for a
		// word in 10 % of the tasks.
		p.steps = 24
		for _, num := range nums {
			v, ok := p.find(num)
			if !ok {
				return errCorrupt
			}
			if err := check(num, v); err != nil {
				return err
			}
		}
	} else {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			if err := check(binary.BigEndian.Uint64(k), v); err != nil {
				return err
			}
		}
	}
	return pageHits(tx, q, out, hits)
}

// rarestPostings returns, in number order, the tasks holding the trigram
// of q's terms with the fewest postings — a superset of the matches that
// the search text then verifies — and false when the index cannot narrow
// the search (not built, or only terms shorter than three bytes). The
// trigrams' postings are walked in lockstep until the first runs out or,
// for common trigrams, until their densities show (see lockstepSteps).
func rarestPostings(tx kv.Tx, terms []string) ([]uint64, bool) {
	nums, ok := rarestIndexed(tx, terms)
	if !ok {
		return nil, false
	}
	// Candidates are verified against the search text: the tasks whose
	// postings are pending join them.
	return mergeNums(nums, pendingNums(tx)), true
}

// rarestIndexed is rarestPostings over the written postings alone.
func rarestIndexed(tx kv.Tx, terms []string) ([]uint64, bool) {
	if tx.Bucket([]byte(store.BucketMeta)).Get(metaTrigramsBuilt) == nil {
		return nil, false
	}
	b := tx.Bucket([]byte(store.BucketTaskTrigrams))
	type walker struct {
		c    kv.Cursor
		g    []byte
		k    []byte
		nums []uint64
	}
	var ws []walker
	seen := map[[3]byte]bool{}
	for _, t := range terms {
		for i := 0; i+3 <= len(t); i++ {
			g := [3]byte{t[i], t[i+1], t[i+2]}
			if !seen[g] {
				seen[g] = true
				w := walker{c: b.Cursor(), g: []byte(t[i : i+3])}
				w.k, _ = w.c.Seek(w.g)
				ws = append(ws, w)
			}
		}
	}
	if len(ws) == 0 {
		return nil, false
	}
	// Each walker collects its numbers as it goes, so the first to run out
	// holds its whole list. Past lockstepSteps steps the walker that has
	// reached the highest task number — the sparsest postings so far —
	// goes on alone: any trigram's postings hold every match, so a wrong
	// guess costs candidates, never a result.
	for step := 0; ; step++ {
		for i := range ws {
			if w := &ws[i]; w.k == nil || !bytes.HasPrefix(w.k, w.g) {
				return w.nums, true
			}
		}
		if step == lockstepSteps {
			best := 0
			for i := range ws {
				if bytes.Compare(ws[i].k[3:], ws[best].k[3:]) > 0 {
					best = i
				}
			}
			w := &ws[best]
			for ; w.k != nil && bytes.HasPrefix(w.k, w.g); w.k, _ = w.c.Next() {
				if len(w.k) == 11 {
					w.nums = append(w.nums, binary.BigEndian.Uint64(w.k[3:]))
				}
			}
			return w.nums, true
		}
		for i := range ws {
			w := &ws[i]
			if len(w.k) == 11 {
				w.nums = append(w.nums, binary.BigEndian.Uint64(w.k[3:]))
			}
			w.k, _ = w.c.Next()
		}
	}
}

// lockstepSteps bounds the lockstep walk of rarestPostings: enough
// postings per trigram to judge their density, few enough that a common
// word's trigrams are not each walked to the end.
var lockstepSteps = 512
