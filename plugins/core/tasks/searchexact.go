package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Exact search from positional postings. A term of three bytes
// or more occurs at offset s of the folded text exactly when its trigrams
// at offsets 0, 3, 6, … and len-3 — which together cover every byte of it —
// occur at s plus those offsets. The postings hold each trigram's
// positions, so a term's matches come from its covering trigrams' postings
// alone, with no search text read; only postings written before positions
// existed (empty values) leave a task to verify against its search text.

// termCover returns the offsets of t's covering trigrams.
func termCover(t string) []int {
	var offs []int
	for o := 0; o+3 <= len(t); o += 3 {
		offs = append(offs, o)
	}
	if last := len(t) - 3; offs[len(offs)-1] != last {
		offs = append(offs, last)
	}
	return offs
}

// hasPosition reports whether the uvarint-delta positions in v hold p.
func hasPosition(v []byte, p int) bool {
	at := 0
	for len(v) > 0 {
		d, w := binary.Uvarint(v)
		if w <= 0 {
			return false
		}
		v = v[w:]
		at += int(d)
		if at >= p {
			return at == p
		}
	}
	return false
}

// termHit is a task holding all of a term's covering trigrams; verify is set
// when a posting carried no positions, so only the search text can tell.
type termHit struct {
	num    uint64
	verify bool
}

// eachTermHit calls fn, in number order, with each task whose text holds t
// (len ≥ 3) — exactly, but for hits marked verify — walking the postings of
// t's rarest covering trigram, until fn returns false.
func eachTermHit(b kv.Bucket, t string, fn func(termHit) bool) {
	checks := termChecks(t)
	d := rarestGram(b, func(i int) []byte { return checks[i].g }, len(checks))
	driver := checks[d]
	checks = append(checks[:d], checks[d+1:]...)
	for i := range checks {
		checks[i].probe = newSparseProbe(b, checks[i].g)
	}
	m := termMatcher{}
	c := b.Cursor()
	for k, v := c.Seek(driver.g); k != nil && bytes.HasPrefix(k, driver.g); k, v = c.Next() {
		if len(k) != 11 {
			continue
		}
		num := binary.BigEndian.Uint64(k[3:])
		if ok, verify := m.match(num, driver.off, v, checks); ok && !fn(termHit{num: num, verify: verify}) {
			return
		}
	}
}

// termChecks returns the covering trigrams of t, without probes.
func termChecks(t string) []gramCheck {
	offs := termCover(t)
	checks := make([]gramCheck, len(offs))
	for i, o := range offs {
		checks[i] = gramCheck{g: []byte(t[o : o+3]), off: o}
	}
	return checks
}

// termProbe tells, for tasks asked in ascending number order, whether a
// task's text holds one term (len ≥ 3), from its covering trigrams'
// postings.
type termProbe struct {
	checks []gramCheck
	m      termMatcher
}

func newTermProbe(b kv.Bucket, t string) *termProbe {
	p := &termProbe{checks: termChecks(t)}
	for i := range p.checks {
		p.checks[i].probe = newSparseProbe(b, p.checks[i].g)
	}
	return p
}

// holds reports whether task num holds the term (verify: only its search
// text can tell).
func (p *termProbe) holds(num uint64) (ok, verify bool) {
	v, found := p.checks[0].probe.find(num)
	if !found {
		return false, false
	}
	return p.m.match(num, p.checks[0].off, v, p.checks[1:])
}

// gramCheck is one covering trigram of a term: the trigram, its offset in
// the term, and a probe into its postings.
type gramCheck struct {
	g     []byte
	off   int
	probe *cursorProbe
}

func newSparseProbe(b kv.Bucket, g []byte) *cursorProbe {
	p := newCursorProbe(b, g)
	p.sparse = true
	return p
}

// termMatcher decides one task from the posting value v of one covering
// trigram (at offset off) and the other checks' postings; it keeps its
// buffer of candidate term starts between tasks.
type termMatcher struct {
	starts []int
}

// match reports whether the task holds the term (or, verify, whether only
// its search text can tell: a posting without positions).
func (m *termMatcher) match(num uint64, off int, v []byte, checks []gramCheck) (ok, verify bool) {
	verify = len(v) == 0
	m.starts = m.starts[:0]
	at := 0
	for rest := v; len(rest) > 0; {
		d, w := binary.Uvarint(rest)
		if w <= 0 {
			verify = true // unreadable positions: let the search text decide
			break
		}
		rest = rest[w:]
		at += int(d)
		if at >= off {
			m.starts = append(m.starts, at-off)
		}
	}
	for _, ch := range checks {
		pv, found := ch.probe.find(num)
		if !found {
			return false, false
		}
		if verify {
			continue
		}
		if len(pv) == 0 {
			verify = true
			continue
		}
		kept := m.starts[:0]
		for _, s := range m.starts {
			if hasPosition(pv, s+ch.off) {
				kept = append(kept, s)
			}
		}
		m.starts = kept
		if len(m.starts) == 0 {
			return false, false
		}
	}
	return verify || len(m.starts) > 0, verify
}

// rarestGram returns which of n trigrams has the fewest postings, walking
// their postings in lockstep: the first to run out, or after lockstepSteps
// steps the one that has reached the highest task number.
func rarestGram(b kv.Bucket, gram func(i int) []byte, n int) int {
	if n == 1 {
		return 0
	}
	cs := make([]kv.Cursor, n)
	ks := make([][]byte, n)
	for i := range cs {
		cs[i] = b.Cursor()
		ks[i], _ = cs[i].Seek(gram(i))
	}
	for step := 0; ; step++ {
		for i := range ks {
			if ks[i] == nil || !bytes.HasPrefix(ks[i], gram(i)) {
				return i
			}
		}
		if step == lockstepSteps {
			best := 0
			for i := range ks {
				if bytes.Compare(ks[i][3:], ks[best][3:]) > 0 {
					best = i
				}
			}
			return best
		}
		for i := range cs {
			ks[i], _ = cs[i].Next()
		}
	}
}

// exactSearchHits returns, in number order, the tasks whose title or
// description holds every term (D9), and false when the postings cannot
// answer: the index is not built, or a term is shorter than three bytes.
func exactSearchHits(tx kv.Tx, terms []string) ([]uint64, bool) {
	hits, _, ok := exactSearchHitsUpTo(tx, terms, -1)
	return hits, ok
}

// exactSearchHitsUpTo is exactSearchHits that stops once it has found more
// than limit hits (limit < 0: no bound): complete is then false, and hits
// holds the first limit+1 hits of the tasks whose postings are written.
// Bounded, it costs about limit·tasks/matches posting steps whatever the
// number of matches (docs/decisions.md D46).
func exactSearchHitsUpTo(tx kv.Tx, terms []string, limit int) (hits []uint64, complete, ok bool) {
	if len(terms) == 0 || tx.Bucket([]byte(store.BucketMeta)).Get(metaTrigramsBuilt) == nil {
		return nil, false, false
	}
	for _, t := range terms {
		if len(t) < 3 {
			return nil, false, false
		}
	}
	b := tx.Bucket([]byte(store.BucketTaskTrigrams))
	// The longest term is likely the rarest: its hits drive, and the
	// others are probed only at those hits.
	order := slices.Clone(terms)
	slices.SortStableFunc(order, func(a, b string) int { return len(b) - len(a) })
	others := make([]*termProbe, 0, len(order)-1)
	for _, t := range order[1:] {
		others = append(others, newTermProbe(b, t))
	}
	sc := tx.Bucket([]byte(store.BucketTaskSearchText)).Cursor()
	bterms := make([][]byte, len(terms))
	for i, t := range terms {
		bterms[i] = []byte(t)
	}
	pending := pendingNums(tx)
	var out []uint64
	complete = true
	j := 0
	eachTermHit(b, order[0], func(h termHit) bool {
		for j < len(pending) && pending[j] < h.num {
			j++
		}
		if j < len(pending) && pending[j] == h.num {
			return true // its postings may be stale: decided below
		}
		verify := h.verify
		for _, p := range others {
			ok, v := p.holds(h.num)
			if !ok {
				return true
			}
			verify = verify || v
		}
		if verify {
			e, ok := decodeSearchEntry(h.num, seekExact(sc, store.U64(h.num)))
			if !ok || !textMatches(e.text, bterms) {
				return true
			}
		}
		out = append(out, h.num)
		if limit >= 0 && len(out) > limit {
			complete = false
			return false
		}
		return true
	})
	if !complete {
		return out, false, true
	}
	// Tasks whose postings are pending are decided by their search text.
	var fresh []uint64
	for _, num := range pending {
		if e, ok := decodeSearchEntry(num, seekExact(sc, store.U64(num))); ok && textMatches(e.text, bterms) {
			fresh = append(fresh, num)
		}
	}
	return mergeNums(out, fresh), true, true
}

// listHitsWalk pages exact search hits of a query with no other filter:
// total_count is the number of hits, and the page comes from walking the
// requested order over every task and taking the hits — about
// (offset+limit)·tasks/hits steps — reading only the page's tasks.
func listHitsWalk(tx kv.Tx, q *listQuery, out *ListOutput, hits []uint64) error {
	out.TotalCount = len(hits)
	if q.offset >= len(hits) {
		return nil
	}
	maxNum := hits[len(hits)-1]
	in := make([]uint64, maxNum/64+1)
	for _, n := range hits {
		in[n/64] |= 1 << (n % 64)
	}
	return walkPage(tx, q, out, func(num uint64) (bool, error) {
		return num <= maxNum && in[num/64]&(1<<(num%64)) != 0, nil
	})
}

// listSearchWalk pages a search with no other filter whose matches were
// counted only up to total (more exist): total_count is total and
// total_capped says so. The page comes from walking the requested order
// over every task and checking each against its search text — about
// (offset+limit)·tasks/matches lookups, flat in the number of tasks for a
// common word (docs/decisions.md D46).
func listSearchWalk(tx kv.Tx, q *listQuery, out *ListOutput, total int) error {
	out.TotalCount, out.TotalCapped = total, true
	sc := tx.Bucket([]byte(store.BucketTaskSearchText)).Cursor()
	terms := make([][]byte, len(q.terms))
	for i, t := range q.terms {
		terms[i] = []byte(t)
	}
	return walkPage(tx, q, out, func(num uint64) (bool, error) {
		e, ok := decodeSearchEntry(num, seekExact(sc, store.U64(num)))
		if !ok {
			return false, errCorrupt
		}
		return textMatches(e.text, terms), nil
	})
}

// walkPage fills q's page with the tasks in q's order, scope, statuses and
// priorities that match says match, reading only the page's tasks.
func walkPage(tx kv.Tx, q *listQuery, out *ListOutput, match func(num uint64) (bool, error)) error {
	scope, statuses, priorities := q.cells()
	skip := q.offset
	tc := tasksBucket(tx).Cursor()
	var raw rawRecord
	for _, group := range sortGroups(q, priorities) {
		w := sortedWalk(tx, q, scope, statuses, group)
		for {
			num, ok := w.next()
			if !ok {
				break
			}
			if ok, err := match(num); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if err := decodeRaw(num, seekExact(tc, store.U64(num)), &raw); err != nil {
				return err
			}
			out.Tasks = append(out.Tasks, listItem(&raw))
			if len(out.Tasks) == q.limit {
				return nil
			}
		}
	}
	return nil
}

// hitsWalkCheap reports whether paging n hits by walking the sorted index
// (about (offset+limit)·tasks/n steps of small keys) costs less than reading
// the search text entry of each hit (n reads of large values, counted as
// four steps each).
func hitsWalkCheap(tx kv.Tx, q *listQuery, n int) bool {
	if n == 0 {
		return true
	}
	all := countCells(tx, scopeAll(), allCodes(len(Statuses)), allCodes(len(Priorities)))
	return (q.offset+q.limit)*all/n <= 4*n
}

// searchTotalCap is how many matches a search with no other filter counts
// at least before it may stop counting (total_capped): enough that most
// searches count exactly, few enough that a word in a tenth of 100,000
// tasks costs what it costs in 10,000 (docs/decisions.md D46). A variable
// so that tests can cap small stores.
var searchTotalCap = 1000

// stopCounting is searchCapCheaper; a test makes it stop whenever it may.
var stopCounting = searchCapCheaper

// searchCapCheaper reports whether a search that found more than limit
// matches among the tasks numbered up to last should stop counting and
// page by walking the sorted index (listSearchWalk), rather than count
// every match: the walk costs about (offset+limit)·tasks/matches search
// text lookups (four posting steps each), the count about one posting step
// per match left, the matches estimated from how far the bounded count got.
func searchCapCheaper(tx kv.Tx, q *listQuery, hits []uint64) bool {
	last := hits[len(hits)-1]
	top := store.PeekID(tx, store.CounterTask)
	if last == 0 || top <= last {
		return false
	}
	est := uint64(len(hits)) * top / last
	all := uint64(countCells(tx, scopeAll(), allCodes(len(Statuses)), allCodes(len(Priorities))))
	walk := 4 * uint64(q.offset+q.limit) * all / est
	return walk < est-uint64(len(hits))
}
