package tasks

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// task_list's sorted indexes and counters. For every sort key
// and order there is one index whose forward byte order is the list's order
// — value then task number ascending, the tie-break D9 pages by — so a
// descending list walks forward too. Each entry sits under a prefix of
// scope (every project, or one project), status and priority: any filter on
// those three is a merge of at most 7×4 index ranges, and total_count is a
// sum of counters kept per (scope, status, priority) cell. Both are written
// in the transaction that writes the task, so they cannot drift from it.

const (
	nStatusCells = 7 // len(Statuses)
	nPrioCells   = 4 // len(Priorities)
	countsLen    = nStatusCells * nPrioCells * 8
)

// sortVariant is the first key byte of the index for sortBy in one order.
func sortVariant(sortBy string, desc bool) byte {
	v := byte(slices.Index(SortKeys, sortBy)) * 2
	if desc {
		v++
	}
	return v
}

// storedVariant reports whether index variant v is written. Every write
// moves each stored key of its task, each on a page of its own, so only
// the orders that need an index have one: a descending list by
// created_at or updated_at walks the ascending index backwards, a run of
// equal values at a time (such runs are short); by priority, a range
// holds one priority, so both orders walk the ascending index forwards
// (task number ascending within it). Only progress, whose runs are long
// (most tasks at 0 or 100), keeps a descending index.
func storedVariant(v byte) bool {
	return v%2 == 0 || SortKeys[v/2] == SortProgress
}

// walkVariant is the index a list by sortBy in one order walks: backwards
// (a descending list by time), or forwards with its values complemented
// (descending by priority: one value per range, so only the order of the
// ranges changes).
func walkVariant(sortBy string, desc bool) (variant byte, backwards, flip bool) {
	if v := sortVariant(sortBy, desc); storedVariant(v) {
		return v, false, false
	}
	if sortBy == SortPriority {
		return sortVariant(sortBy, false), false, true
	}
	return sortVariant(sortBy, false), true, false
}

// orderedFloat maps f to 8 bytes whose unsigned order is f's numeric order
// (-0 and 0 map alike, since they compare equal).
func orderedFloat(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func orderedInt(n int64) uint64 { return uint64(n) ^ 1<<63 }

// sortValue is rec's key for sortBy, complemented for a descending order.
func sortValue(rec *record, sortBy string, desc bool) uint64 {
	var v uint64
	switch sortBy {
	case SortCreated:
		v = orderedInt(rec.createdMs)
	case SortUpdated:
		v = orderedInt(rec.updatedMs)
	case SortPriority:
		v = uint64(rec.priority)
	default:
		v = orderedFloat(rec.progress)
	}
	if desc {
		v = ^v
	}
	return v
}

// scopeAll and scopeProject are the scope part of an index key.
func scopeAll() []byte { return []byte{0} }

func scopeProject(project string) []byte {
	k := make([]byte, 0, len(project)+2)
	k = append(k, 1)
	k = append(k, project...)
	return append(k, 0)
}

// sortedPrefix is the key prefix of one (variant, scope, status, priority)
// range.
func sortedPrefix(variant byte, scope []byte, status, priority uint8) []byte {
	return appendSortedPrefix(make([]byte, 0, len(scope)+19), variant, scope, status, priority)
}

func appendSortedPrefix(k []byte, variant byte, scope []byte, status, priority uint8) []byte {
	k = append(k, variant)
	k = append(k, scope...)
	return append(k, status, priority)
}

// appendSortedKey appends rec's key in the index variant of scope to k.
func appendSortedKey(k []byte, rec *record, variant byte, scope []byte) []byte {
	sortBy, desc := SortKeys[variant/2], variant%2 == 1
	k = appendSortedPrefix(k, variant, scope, rec.status, rec.priority)
	k = binary.BigEndian.AppendUint64(k, sortValue(rec, sortBy, desc))
	return binary.BigEndian.AppendUint64(k, rec.num)
}

// indexList moves rec's sorted-index entries and counter cells from prev
// (nil: a new task) to rec.
func indexList(tx kv.Tx, rec, prev *record) error {
	if !listIndexCovers(tx, rec.num) {
		return nil
	}
	if err := indexFacets(tx, rec, prev); err != nil {
		return err
	}
	b := tx.Bucket([]byte(store.BucketTaskSorted))
	// Both stores copy a key they are given, so one buffer serves every
	// key of this write.
	var k, old []byte
	for _, scope := range [][]byte{scopeAll(), scopeProject(rec.project)} {
		for v := byte(0); v < byte(len(SortKeys)*2); v++ {
			if !storedVariant(v) {
				continue
			}
			k = appendSortedKey(k[:0], rec, v, scope)
			if prev != nil {
				old = appendSortedKey(old[:0], prev, v, scope)
				if string(old) == string(k) {
					continue
				}
				if err := b.Delete(old); err != nil {
					return err
				}
			}
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
		if prev != nil && prev.status == rec.status && prev.priority == rec.priority {
			continue
		}
		if prev != nil {
			if err := addCount(tx, scope, prev.status, prev.priority, -1); err != nil {
				return err
			}
		}
		if err := addCount(tx, scope, rec.status, rec.priority, 1); err != nil {
			return err
		}
	}
	return nil
}

func countCell(status, priority uint8) int {
	return (int(status-1)*nPrioCells + int(priority-1)) * 8
}

func addCount(tx kv.Tx, scope []byte, status, priority uint8, delta int64) error {
	b, key := tx.Bucket([]byte(store.BucketTaskCounts)), scope
	if tx.Concurrent() {
		shard := tx.Shard()
		// Beside other servers' writes every write would change the same
		// counters: this server's change goes under its own shard.
		b, key = tx.Bucket([]byte(store.BucketTaskCountShards)), append(append([]byte{}, scope...), shard...)
	}
	return addCountAt(b, key, status, priority, delta)
}

// addCountAt adds delta to one cell of the counters under key in b.
func addCountAt(b kv.Bucket, key []byte, status, priority uint8, delta int64) error {
	cur := make([]byte, countsLen)
	copy(cur, b.Get(key))
	i := countCell(status, priority)
	binary.BigEndian.PutUint64(cur[i:], uint64(int64(binary.BigEndian.Uint64(cur[i:]))+delta))
	if bytes.Count(cur, []byte{0}) == len(cur) {
		return b.Delete(key) // an empty facet leaves no trace
	}
	return b.Put(key, cur)
}

// countKeysOf are the counters a write of rec changes inside a shared
// update (its shards of every scope rec counts in), for tx.Prefetch; none
// elsewhere.
func countKeysOf(tx kv.Tx, rec *record) []kv.Key {
	if !tx.Concurrent() {
		return nil
	}
	var keys []kv.Key
	for _, scope := range append([][]byte{scopeAll(), scopeProject(rec.project)}, facetScopesOf(rec)...) {
		keys = append(keys, kv.Key{Bucket: []byte(store.BucketTaskCountShards), Key: append(slices.Clip(scope), tx.Shard()...)})
	}
	return keys
}

// countCells sums the counters of scope over the given status and priority
// codes.
func countCells(tx kv.Tx, scope []byte, statuses, priorities []uint8) int {
	raw := tx.Bucket([]byte(store.BucketTaskCounts)).Get(scope)
	n := sumCells(raw, statuses, priorities)
	if tx.Shared() {
		// On PostgreSQL, add the servers' shards (addCount): the keys one
		// shard id longer than scope.
		c := tx.Bucket([]byte(store.BucketTaskCountShards)).Cursor()
		for k, v := c.Seek(scope); k != nil && bytes.HasPrefix(k, scope); k, v = c.Next() {
			if len(k) == len(scope)+shardLen {
				n += sumCells(v, statuses, priorities)
			}
		}
	}
	return n
}

// shardLen is the length of a shard id (kv.Tx.Shard).
const shardLen = 8

func sumCells(raw []byte, statuses, priorities []uint8) int {
	if len(raw) != countsLen {
		return 0
	}
	n := 0
	for _, s := range statuses {
		for _, p := range priorities {
			n += int(int64(binary.BigEndian.Uint64(raw[countCell(s, p):])))
		}
	}
	return n
}

// foldCountShards adds every server's counter shards into the counters and
// removes them, in an exclusive update (Service.foldShards).
func foldCountShards(tx kv.Tx) error {
	counts := tx.Bucket([]byte(store.BucketTaskCounts))
	shards := tx.Bucket([]byte(store.BucketTaskCountShards))
	var keys, vals [][]byte
	if err := shards.ForEach(func(k, v []byte) error {
		keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
		return nil
	}); err != nil {
		return err
	}
	for i, k := range keys {
		if len(k) < shardLen || len(vals[i]) != countsLen {
			continue
		}
		scope := k[:len(k)-shardLen]
		for s := uint8(1); s <= nStatusCells; s++ {
			for p := uint8(1); p <= nPrioCells; p++ {
				if d := int64(binary.BigEndian.Uint64(vals[i][countCell(s, p):])); d != 0 {
					if err := addCountAt(counts, scope, s, p, d); err != nil {
						return err
					}
				}
			}
		}
	}
	return tx.Clear([]byte(store.BucketTaskCountShards))
}

// The list and ready indexes cover the tasks numbered below the meta value
// list_index_upto; building them on open raises it batch by batch to
// listIndexBuilt. A write to a task not yet covered leaves its entries to
// the build, so the build and concurrent writes never count a task twice.
var metaListIndexUpto = []byte("list_index_upto")

const listIndexBuilt = math.MaxUint64

func listIndexUpto(tx kv.Tx) uint64 {
	if raw := tx.Bucket([]byte(store.BucketMeta)).Get(metaListIndexUpto); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}

func listIndexCovers(tx kv.Tx, num uint64) bool { return num < listIndexUpto(tx) }

func listIndexReady(tx kv.Tx) bool { return listIndexUpto(tx) == listIndexBuilt }
