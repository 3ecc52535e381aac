package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// listMembers answers q from the member entries of its facets: the
// smallest facet is walked in number order, every other facet is probed by
// a cursor that moves forward with it, and the status, priority and
// creation-time filters and the sort key come from the entry — no task is
// read but the page's. Its work is bounded by the smallest facet.
func listMembers(tx kv.Tx, q *listQuery, out *ListOutput, facets [][]byte) error {
	all, allP := allCodes(len(Statuses)), allCodes(len(Priorities))
	facets = slices.Clone(facets)
	slices.SortFunc(facets, func(a, b []byte) int {
		return countCells(tx, a, all, allP) - countCells(tx, b, all, allP)
	})
	_, statuses, priorities := q.cells()
	var statusOK, priorityOK [256]bool
	for _, s := range statuses {
		statusOK[s] = true
	}
	for _, p := range priorities {
		priorityOK[p] = true
	}
	b := tx.Bucket([]byte(store.BucketTaskFacets))
	probes := make([]*cursorProbe, len(facets)-1)
	for i, f := range facets[1:] {
		probes[i] = newCursorProbe(b, f)
	}
	lead := facets[0]
	var hits []hit
	c := b.Cursor()
	for k, v := c.Seek(lead); k != nil && bytes.HasPrefix(k, lead); k, v = c.Next() {
		if len(k) != len(lead)+8 {
			continue
		}
		m, ok := decodeMember(binary.BigEndian.Uint64(k[len(lead):]), v)
		if !ok {
			return errCorrupt
		}
		if !statusOK[m.status] || !priorityOK[m.priority] || !q.createdIn(m.createdMs) {
			continue
		}
		in := true
		for i := range probes {
			if _, ok := probes[i].find(m.num); !ok {
				in = false
				break
			}
		}
		if in {
			hits = append(hits, hit{num: m.num, key: q.memberKey(&m)})
		}
	}
	return pageHits(tx, q, out, hits)
}

// createdIn applies q's creation-time range to a unix-ms creation time.
func (q *listQuery) createdIn(ms int64) bool {
	if q.after == nil && q.before == nil {
		return true
	}
	created := time.UnixMilli(ms)
	return (q.after == nil || created.After(*q.after)) && (q.before == nil || created.Before(*q.before))
}

// memberKey is q.key for a member entry.
func (q *listQuery) memberKey(m *member) float64 {
	switch q.sortBy {
	case SortCreated:
		return float64(m.createdMs)
	case SortPriority:
		return float64(m.priority)
	case SortProgress:
		return m.progress
	default:
		return float64(m.updatedMs)
	}
}
