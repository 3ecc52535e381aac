package tasks

import (
	"bytes"
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// mergeWalk yields the entries of several sorted-index ranges in their
// common order: each range is already in list order (sort value, then task
// number), so a heap of the ranges' heads gives the merged order with
// O(log ranges) work per entry — the cost of a page is bounded by
// offset+limit, whatever the number of tasks.
type mergeWalk struct {
	heads []walkHead
}

type walkHead struct {
	c      kv.Cursor
	prefix []byte
	suffix []byte // sort value and number of the current entry
	// value and num are suffix decoded: comparing two integers is several
	// times cheaper than bytes.Compare, and the walk compares on every step.
	value, num uint64
	// back walks the range from its end (a descending list over an
	// ascending index): run holds the task numbers of the current run of
	// equal values still to come after num, highest first, yielded from
	// its end so that numbers ascend within a value; ahead is the entry
	// read past the run.
	back  bool
	run   []uint64
	ahead []byte
	// flip complements the value of a forward head (see walkVariant).
	flip bool
}

func newMergeWalk(b kv.Bucket, prefixes [][]byte, flip bool) *mergeWalk {
	w := &mergeWalk{}
	for _, p := range prefixes {
		h := walkHead{c: b.Cursor(), prefix: p, flip: flip}
		if h.load(h.c.Seek(p)) {
			w.heads = append(w.heads, h)
		}
	}
	w.heapify()
	return w
}

// newMergeWalkFrom starts each range at its first entry whose sort value
// and number are at least from.
func newMergeWalkFrom(b kv.Bucket, prefixes [][]byte, from []byte) *mergeWalk {
	w := &mergeWalk{}
	for _, p := range prefixes {
		h := walkHead{c: b.Cursor(), prefix: p}
		if h.load(h.c.Seek(append(p[:len(p):len(p)], from...))) {
			w.heads = append(w.heads, h)
		}
	}
	w.heapify()
	return w
}

// newMergeWalkBack walks each range from its end: sort values descending,
// task numbers ascending within a value, the order of a descending list.
func newMergeWalkBack(b kv.Bucket, prefixes [][]byte) *mergeWalk {
	w := &mergeWalk{heads: make([]walkHead, 0, len(prefixes))}
	var end []byte
	for _, p := range prefixes {
		h := walkHead{c: b.Cursor(), prefix: p, back: true}
		// The first key past the range, then one step back.
		end = append(append(end[:0], p...), pastRange...)
		k, _ := h.c.Seek(end)
		if k == nil {
			k, _ = h.c.Last()
		} else {
			k, _ = h.c.Prev()
		}
		h.ahead = k
		if h.nextRun() {
			w.heads = append(w.heads, h)
		}
	}
	w.heapify()
	return w
}

// pastRange follows a range's prefix to make a key above all its entries
// (sort value and number: 16 bytes).
var pastRange = bytes.Repeat([]byte{0xff}, 17)

func (w *mergeWalk) heapify() {
	for i := len(w.heads)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}

// inRange reports whether k is an entry of the head's range.
func (h *walkHead) inRange(k []byte) bool {
	return k != nil && bytes.HasPrefix(k, h.prefix) && len(k) == len(h.prefix)+16
}

// nextRun reads the next run of equal values backwards from ahead; value
// is complemented so that the merge's ascending order is the list's. A run
// of one (the common case: times rarely tie) needs no buffer; a longer
// run keeps the numbers still to come in run, lowest last.
func (h *walkHead) nextRun() bool {
	if !h.inRange(h.ahead) {
		return false
	}
	at := len(h.prefix)
	v := binary.BigEndian.Uint64(h.ahead[at:])
	h.value, h.num = ^v, binary.BigEndian.Uint64(h.ahead[at+8:])
	h.run = h.run[:0]
	k, _ := h.c.Prev()
	for h.inRange(k) && binary.BigEndian.Uint64(k[at:]) == v {
		h.run = append(h.run, h.num)
		h.num = binary.BigEndian.Uint64(k[at+8:])
		k, _ = h.c.Prev()
	}
	h.ahead = k
	return true
}

// step moves a backwards head to its next entry.
func (h *walkHead) step() bool {
	if n := len(h.run); n > 0 {
		h.num = h.run[n-1]
		h.run = h.run[:n-1]
		return true
	}
	return h.nextRun()
}

// load sets the head to key k and reports whether k is still in its range.
func (h *walkHead) load(k, _ []byte) bool {
	if !h.inRange(k) {
		return false
	}
	h.suffix = k[len(h.prefix):]
	h.value = binary.BigEndian.Uint64(h.suffix)
	if h.flip {
		h.value = ^h.value
	}
	h.num = binary.BigEndian.Uint64(h.suffix[8:])
	return true
}

func (w *mergeWalk) less(i, j int) bool {
	a, b := &w.heads[i], &w.heads[j]
	return a.value < b.value || a.value == b.value && a.num < b.num
}

func (w *mergeWalk) down(i int) {
	n := len(w.heads)
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && w.less(l, m) {
			m = l
		}
		if r < n && w.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		w.heads[i], w.heads[m] = w.heads[m], w.heads[i]
		i = m
	}
}

// next returns the task number of the next entry, or false at the end.
func (w *mergeWalk) next() (uint64, bool) {
	if len(w.heads) == 0 {
		return 0, false
	}
	h := &w.heads[0]
	num := h.num
	var more bool
	if h.back {
		more = h.step()
	} else {
		more = h.load(h.c.Next())
	}
	if !more {
		last := len(w.heads) - 1
		w.heads[0] = w.heads[last]
		w.heads = w.heads[:last]
	}
	if len(w.heads) > 0 {
		w.down(0)
	}
	return num, true
}

// indexedOnly reports whether q filters on nothing but project, status and
// priority — the filters the sorted indexes and counters answer exactly.
func (q *listQuery) indexedOnly() bool {
	return q.assignee == nil && q.label == nil && q.after == nil && q.before == nil && len(q.terms) == 0
}

// cells returns the index scope of q and the status and priority codes it
// admits.
func (q *listQuery) cells() (scope []byte, statuses, priorities []uint8) {
	scope = scopeAll()
	if q.project != "" {
		scope = scopeProject(q.project)
	}
	if q.statuses == nil {
		statuses = allCodes(len(Statuses))
	} else {
		for _, s := range q.statuses {
			statuses = append(statuses, statusCode(s))
		}
	}
	for i := range Priorities {
		if q.priorities == nil || q.priorities[i+1] {
			priorities = append(priorities, uint8(i+1))
		}
	}
	return scope, statuses, priorities
}

func allCodes(n int) []uint8 {
	out := make([]uint8, n)
	for i := range out {
		out[i] = uint8(i + 1)
	}
	return out
}

// sortedWalk merges q's ranges of the sorted index for q's sort and order,
// leaving out the ranges whose counter says they are empty.
func sortedWalk(tx kv.Tx, q *listQuery, scope []byte, statuses, priorities []uint8) *mergeWalk {
	variant, backwards, flip := walkVariant(q.sortBy, q.desc)
	var prefixes [][]byte
	for _, s := range statuses {
		for _, p := range priorities {
			if countCells(tx, scope, []uint8{s}, []uint8{p}) > 0 {
				prefixes = append(prefixes, sortedPrefix(variant, scope, s, p))
			}
		}
	}
	b := tx.Bucket([]byte(store.BucketTaskSorted))
	if backwards {
		return newMergeWalkBack(b, prefixes)
	}
	return newMergeWalk(b, prefixes, flip)
}

// sortGroups splits priorities into the groups whose sorted ranges are
// merged together: all at once, or by priority one after another when the
// list sorts by priority.
func sortGroups(q *listQuery, priorities []uint8) [][]uint8 {
	if q.sortBy != SortPriority {
		return [][]uint8{priorities}
	}
	groups := make([][]uint8, 0, len(priorities))
	for i := range priorities {
		p := priorities[i]
		if q.desc {
			p = priorities[len(priorities)-1-i]
		}
		groups = append(groups, []uint8{p})
	}
	return groups
}

// listIndexed answers an indexedOnly query from the sorted indexes:
// total_count from the counters, the page by skipping offset entries of the
// merged ranges and decoding only the rows returned.
//
// Sorted by priority, the ranges of one priority come wholly before the
// next priority's, so they are walked one priority at a time: the
// counters skip every priority the offset passes without reading an entry,
// and the merge holds only one priority's ranges.
func listIndexed(tx kv.Tx, q *listQuery, out *ListOutput) error {
	scope, statuses, priorities := q.cells()
	out.TotalCount = countCells(tx, scope, statuses, priorities)
	if q.offset >= out.TotalCount {
		return nil
	}
	groups := sortGroups(q, priorities)
	skip := q.offset
	tc := tasksBucket(tx).Cursor()
	var raw rawRecord
	for _, group := range groups {
		if n := countCells(tx, scope, statuses, group); skip >= n {
			skip -= n
			continue
		}
		w := sortedWalk(tx, q, scope, statuses, group)
		for ; skip > 0; skip-- {
			if _, ok := w.next(); !ok {
				return nil
			}
		}
		for len(out.Tasks) < q.limit {
			num, ok := w.next()
			if !ok {
				break
			}
			if err := decodeRaw(num, seekExact(tc, store.U64(num)), &raw); err != nil {
				return err
			}
			out.Tasks = append(out.Tasks, listItem(&raw))
		}
		if len(out.Tasks) == q.limit {
			break
		}
	}
	return nil
}

// listFiltered pages through the sorted index like listIndexed but reads
// each entry's task to apply the filters the index does not encode; the
// caller knows total_count. It reads about (offset+limit)/selectivity
// tasks, which is cheap exactly when the filter is not selective.
func listFiltered(tx kv.Tx, q *listQuery, out *ListOutput) error {
	scope, statuses, priorities := q.cells()
	w := sortedWalk(tx, q, scope, statuses, priorities)
	tc := tasksBucket(tx).Cursor()
	var raw rawRecord
	// The filters this plan applies (priority, assignee, label; no search
	// or creation time) sit at the head of a record, so a rejected task
	// costs no full decode.
	head := q.after == nil && q.before == nil && len(q.terms) == 0
	for skipped := 0; len(out.Tasks) < q.limit; {
		num, ok := w.next()
		if !ok {
			break
		}
		v := seekExact(tc, store.U64(num))
		if head {
			if err := decodeHead(num, v, &raw); err != nil {
				return err
			}
		} else if err := decodeRaw(num, v, &raw); err != nil {
			return err
		}
		if !q.match(&raw) {
			continue
		}
		if skipped < q.offset {
			skipped++
			continue
		}
		if head {
			if err := decodeRaw(num, v, &raw); err != nil {
				return err
			}
		}
		out.Tasks = append(out.Tasks, listItem(&raw))
	}
	return nil
}

// decodeHead decodes a record's fields up to its labels — what the facet
// and priority filters read — leaving the rest of r unset.
func decodeHead(num uint64, b []byte, r *rawRecord) error {
	d := decoder{b: b}
	if !d.head(num, r) || d.bad {
		return errCorrupt
	}
	return nil
}

func listItem(raw *rawRecord) ListItem {
	return ListItem{
		TaskID:    FormatTaskID(raw.num),
		Title:     string(raw.title),
		Project:   string(raw.project),
		Status:    statusName(raw.status),
		Priority:  priorityName(raw.priority),
		Progress:  shownProgress(raw.status, raw.progress),
		Assignee:  string(raw.assignee),
		CreatedAt: formatMillis(raw.createdMs),
		UpdatedAt: formatMillis(raw.updatedMs),
	}
}
