package tasks

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Facets: task_list's assignee and label filters. Each task is a
// member of its assignee's facet and of each of its labels' facets, in every
// project and in its own; a member index lists the tasks of a facet, and a
// counter per (facet, status, priority) cell gives total_count for a facet
// filter without reading a task; a member entry carries the fields facet
// queries filter and sort on. All are written in the task's own
// transaction, like the sorted indexes.

const (
	facetAssignee = 'a'
	facetLabel    = 'l'
)

// facetScope is the counter key and member-index prefix of one facet:
// 0x02, kind, value, 0x00 across projects; 0x03, slug, 0x00, kind, value,
// 0x00 within one.
func facetScope(project string, kind byte, value []byte) []byte {
	k := make([]byte, 0, len(project)+len(value)+4)
	if project == "" {
		k = append(k, 2)
	} else {
		k = append(k, 3)
		k = append(k, project...)
		k = append(k, 0)
	}
	k = append(k, kind)
	k = append(k, value...)
	return append(k, 0)
}

// facetScopesOf lists the facet scopes rec belongs to, across projects and
// within its own.
func facetScopesOf(rec *record) [][]byte {
	var out [][]byte
	labels := slices.Clone(rec.labels)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	for _, project := range []string{"", rec.project} {
		out = append(out, facetScope(project, facetAssignee, []byte(rec.assignee)))
		for _, l := range labels {
			out = append(out, facetScope(project, facetLabel, []byte(l)))
		}
	}
	return out
}

// memberValue is what a member entry carries so that facet queries filter
// and sort without reading the task: status, priority, created and updated
// (unix ms) and progress.
func memberValue(rec *record) []byte {
	v := make([]byte, 0, 26)
	v = append(v, rec.status, rec.priority)
	v = binary.BigEndian.AppendUint64(v, uint64(rec.createdMs))
	v = binary.BigEndian.AppendUint64(v, uint64(rec.updatedMs))
	return binary.BigEndian.AppendUint64(v, math.Float64bits(rec.progress))
}

// member is a member entry decoded.
type member struct {
	num                  uint64
	status, priority     uint8
	createdMs, updatedMs int64
	progress             float64
}

func decodeMember(num uint64, v []byte) (member, bool) {
	if len(v) != 26 {
		return member{}, false
	}
	return member{num: num, status: v[0], priority: v[1],
		createdMs: int64(binary.BigEndian.Uint64(v[2:])), updatedMs: int64(binary.BigEndian.Uint64(v[10:])),
		progress: math.Float64frombits(binary.BigEndian.Uint64(v[18:]))}, true
}

// indexFacets moves rec's facet memberships and facet counter cells from
// prev (nil: a new task) to rec, and refreshes the member values.
func indexFacets(tx kv.Tx, rec, prev *record) error {
	now := facetScopesOf(rec)
	members := tx.Bucket([]byte(store.BucketTaskFacets))
	moved := prev == nil || prev.status != rec.status || prev.priority != rec.priority || prev.assignee != rec.assignee || !slices.Equal(prev.labels, rec.labels)
	if prev != nil && moved {
		for _, scope := range facetScopesOf(prev) {
			if err := addCount(tx, scope, prev.status, prev.priority, -1); err != nil {
				return err
			}
			if !slices.ContainsFunc(now, func(s []byte) bool { return bytes.Equal(s, scope) }) {
				if err := members.Delete(binary.BigEndian.AppendUint64(slices.Clip(scope), rec.num)); err != nil {
					return err
				}
			}
		}
	}
	value := memberValue(rec)
	for _, scope := range now {
		if moved {
			if err := addCount(tx, scope, rec.status, rec.priority, 1); err != nil {
				return err
			}
		}
		if err := members.Put(binary.BigEndian.AppendUint64(slices.Clip(scope), rec.num), value); err != nil {
			return err
		}
	}
	return nil
}

// facetMembers lists the tasks of a facet scope in number order.
func facetMembers(tx kv.Tx, scope []byte) []uint64 {
	c := tx.Bucket([]byte(store.BucketTaskFacets)).Cursor()
	var out []uint64
	for k, _ := c.Seek(scope); k != nil && bytes.HasPrefix(k, scope); k, _ = c.Next() {
		if len(k) == len(scope)+8 {
			out = append(out, binary.BigEndian.Uint64(k[len(scope):]))
		}
	}
	return out
}
