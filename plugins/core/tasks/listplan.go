package tasks

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// listPlanned answers task_list from the indexes, choosing by the filters:
//
//   - project, status and priority only: the counters give total_count and
//     a merged walk of the sorted index gives the page — bounded by
//     offset+limit, whatever the number of tasks;
//   - one assignee or label filter besides: its facet counters give
//     total_count; the page comes from walking the sorted index and
//     filtering (about (offset+limit)/selectivity task reads) or, when the
//     facet is selective enough that this costs more, from the facet's
//     member entries, which carry status, priority and sort keys, so no
//     task is read but the page's — the cheaper of the two;
//   - two facets, or a facet with a creation-time range, have no counter:
//     total_count needs every match, and the smallest facet's member
//     entries, probed against the other facet, give them without reading
//     tasks — bounded by the smallest facet;
//   - search, or a creation-time range alone, has no counter either: the
//     smallest candidate set available — a facet's members, the search
//     postings, or the tasks of the creation-time range (a walk of the
//     created index) — is read and filtered, else the project/status
//     indexes are. The work is bounded by that set, not by the number of
//     tasks; search must read each candidate to check D9's substring rule
//     unless its terms are all three bytes or more: then the positional
//     postings give the matches exactly, and with no other filter the page
//     comes from walking the sorted index over them (listHitsWalk). With
//     no other filter the count stops past searchTotalCap matches when
//     counting on would cost more than the page, which then comes from
//     walking the sorted index against the search text (listSearchWalk,
//     total_capped): a common word's page costs the same at any size
//     (docs/decisions.md D46).
func listPlanned(tx kv.Tx, q *listQuery, out *ListOutput) error {
	plan, facets := choosePlan(tx, q)
	switch plan {
	case planIndexed:
		return listIndexed(tx, q, out)
	case planFacetWalk, planFacetMembers:
		_, statuses, priorities := q.cells()
		out.TotalCount = countCells(tx, facets[0], statuses, priorities)
		if q.offset >= out.TotalCount {
			return nil
		}
		if plan == planFacetWalk {
			return listFiltered(tx, q, out)
		}
		return listMembers(tx, q, out, facets)
	}
	if len(facets) > 0 && len(q.terms) == 0 {
		return listMembers(tx, q, out, facets)
	}
	var nums []uint64
	have := false
	if len(facets) > 0 {
		all, allP := allCodes(len(Statuses)), allCodes(len(Priorities))
		smallest := slices.MinFunc(facets, func(a, b []byte) int {
			return countCells(tx, a, all, allP) - countCells(tx, b, all, allP)
		})
		nums, have = facetMembers(tx, smallest), true
	}
	text := len(q.terms) > 0 && searchTextReady(tx)
	if text && len(facets) == 0 && q.after == nil && q.before == nil {
		walkable := q.project == "" && q.statuses == nil && q.priorities == nil && listIndexReady(tx)
		limit := -1
		if walkable {
			limit = max(searchTotalCap, q.offset+q.limit)
		}
		hits, complete, ok := exactSearchHitsUpTo(tx, q.terms, limit)
		if ok && !complete {
			if stopCounting(tx, q, hits) {
				return listSearchWalk(tx, q, out, limit)
			}
			hits, _, ok = exactSearchHitsUpTo(tx, q.terms, -1)
		}
		if ok {
			if walkable && hitsWalkCheap(tx, q, len(hits)) {
				return listHitsWalk(tx, q, out, hits)
			}
			return listSearchText(tx, q, out, hits, true)
		}
	}
	if len(q.terms) > 0 && (!have || len(nums) > 64) {
		candidates := searchCandidates
		if text {
			candidates = rarestPostings
		}
		if found, ok := candidates(tx, q.terms); ok && (!have || len(found) < len(nums)) {
			nums, have = found, true
		}
	}
	if q.after != nil || q.before != nil {
		limit := -1
		if have {
			limit = len(nums)
		}
		if found, ok := createdRange(tx, q, limit); ok {
			nums, have = found, true
		}
	}
	if text {
		return listSearchText(tx, q, out, nums, have)
	}
	return listScan(tx, q, out, nums, have)
}

// createdRange lists the tasks in q's scope, statuses and priorities whose
// creation time is inside q's range, from the created-ascending index: the
// range is a seek and a walk, with no task read. It gives up (false) once
// it has more than limit tasks (limit < 0: no limit), when another
// candidate set is smaller.
func createdRange(tx kv.Tx, q *listQuery, limit int) ([]uint64, bool) {
	scope, statuses, priorities := q.cells()
	var prefixes [][]byte
	variant := sortVariant(SortCreated, false)
	for _, s := range statuses {
		for _, p := range priorities {
			prefixes = append(prefixes, sortedPrefix(variant, scope, s, p))
		}
	}
	var from []byte
	if q.after != nil {
		// The first millisecond strictly after q.after.
		from = binary.BigEndian.AppendUint64(nil, orderedInt(q.after.UnixMilli()+1))
	}
	w := newMergeWalkFrom(tx.Bucket([]byte(store.BucketTaskSorted)), prefixes, from)
	var out []uint64
	for {
		if len(w.heads) == 0 {
			return out, true
		}
		created := time.UnixMilli(int64(binary.BigEndian.Uint64(w.heads[0].suffix) ^ 1<<63))
		if q.before != nil && !created.Before(*q.before) {
			return out, true
		}
		num, _ := w.next()
		if q.after != nil && !created.After(*q.after) {
			continue
		}
		if limit >= 0 && len(out) >= limit {
			return nil, false
		}
		out = append(out, num)
	}
}

// A listPlan is how listPlanned answers a query.
type listPlan int

const (
	planIndexed      listPlan = iota // counters and a merged walk
	planFacetWalk                    // facet counters, walk and filter
	planFacetMembers                 // facet counters, the facet's members sorted
	planScan                         // every match collected, then sorted
)

// choosePlan picks q's plan and returns the facet scopes q filters on.
func choosePlan(tx kv.Tx, q *listQuery) (listPlan, [][]byte) {
	if q.indexedOnly() {
		return planIndexed, nil
	}
	var facets [][]byte
	if q.assignee != nil {
		facets = append(facets, facetScope(q.project, facetAssignee, q.assignee))
	}
	if q.label != nil {
		facets = append(facets, facetScope(q.project, facetLabel, q.label))
	}
	if len(facets) != 1 || q.after != nil || q.before != nil || len(q.terms) > 0 {
		return planScan, facets
	}
	scope, statuses, priorities := q.cells()
	matches := countCells(tx, facets[0], statuses, priorities)
	if matches == 0 {
		return planFacetMembers, facets // nothing to read either way
	}
	// The walk reads about (offset+limit)·inScope/matches tasks; the
	// members path reads every member of the facet.
	walk := (q.offset + q.limit) * countCells(tx, scope, statuses, priorities) / matches
	if walk <= countCells(tx, facets[0], allCodes(len(Statuses)), allCodes(len(Priorities))) {
		return planFacetWalk, facets
	}
	return planFacetMembers, facets
}

// listScan collects every match of q among nums (when have) or among the
// tasks the project/status indexes or the search postings yield, then sorts
// just enough of them for the page.
func listScan(tx kv.Tx, q *listQuery, out *ListOutput, nums []uint64, have bool) error {
	var hits []hit
	var raw rawRecord
	collect := func(num uint64, v []byte) error {
		if err := decodeRaw(num, v, &raw); err != nil {
			return err
		}
		if q.match(&raw) {
			hits = append(hits, hit{num: num, key: q.key(&raw)})
		}
		return nil
	}
	if !have {
		nums, have = searchCandidates(tx, q.terms)
	}
	var err error
	if have {
		// An index narrowed the tasks; the project and status filters the
		// other indexes would have applied are checked here.
		tc := tasksBucket(tx).Cursor()
		for _, num := range nums {
			v := seekExact(tc, store.U64(num))
			if v == nil {
				return fmt.Errorf("tasks: index points at missing task %d", num)
			}
			if err = decodeRaw(num, v, &raw); err != nil {
				return err
			}
			if q.project != "" && string(raw.project) != q.project {
				continue
			}
			if q.statuses != nil && !slices.Contains(q.statuses, statusName(raw.status)) {
				continue
			}
			if err = collect(num, v); err != nil {
				return err
			}
		}
	} else {
		err = candidates(tx, q.project, q.statuses, collect)
	}
	if err != nil {
		return err
	}
	return pageHits(tx, q, out, hits)
}

// pageHits sets total_count to the number of hits and fills the page: it
// sorts just enough of the hits and reads only the page's tasks.
func pageHits(tx kv.Tx, q *listQuery, out *ListOutput, hits []hit) error {
	var raw rawRecord
	out.TotalCount = len(hits)
	if q.offset >= len(hits) {
		return nil
	}
	end := min(q.offset+q.limit, len(hits))
	sortHits(hits, q.desc, end)
	tc := tasksBucket(tx).Cursor()
	for _, h := range hits[q.offset:end] {
		if err := decodeRaw(h.num, seekExact(tc, store.U64(h.num)), &raw); err != nil {
			return err
		}
		out.Tasks = append(out.Tasks, listItem(&raw))
	}
	return nil
}
