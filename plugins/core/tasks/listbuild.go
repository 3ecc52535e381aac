package tasks

import (
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// ensureListIndexes builds the sorted list indexes, counters and ready
// indexes of a store that lacks them (one written before schema v5), in
// batches of rebuildBatch tasks by number. Each batch raises
// list_index_upto in its own transaction, so writes made meanwhile maintain
// exactly the tasks already covered, and a build cut short resumes where it
// stopped on the next open.
func (s *Service) ensureListIndexes() error {
	var upto uint64
	if err := s.st.View(func(tx kv.Tx) error {
		upto = listIndexUpto(tx)
		return nil
	}); err != nil {
		return err
	}
	if upto == listIndexBuilt {
		return s.dropUnstoredVariants()
	}
	if upto == 0 {
		// First build: start from empty indexes whatever a crashed
		// earlier attempt without the meta key left.
		if err := s.st.Update(func(tx kv.Tx) error {
			if listIndexUpto(tx) != 0 {
				return nil // another server started the build meanwhile
			}
			names := []string{store.BucketTaskSorted, store.BucketTaskCounts, store.BucketTaskReady, store.BucketTaskReadyOf, store.BucketTaskWaiting, store.BucketTaskFacets}
			if tx.Shared() {
				names = append(names, store.BucketTaskCountShards)
			}
			for _, name := range names {
				if err := tx.Clear([]byte(name)); err != nil {
					return err
				}
			}
			return setListIndexUpto(tx, 1)
		}); err != nil {
			return err
		}
	}
	for done := false; !done; {
		err := s.st.UpdateLarge(func(tx kv.Tx) error {
			var raw rawRecord
			c := tasksBucket(tx).Cursor()
			n := 0
			k, v := c.Seek(store.U64(listIndexUpto(tx)))
			for ; k != nil && n < rebuildBatch; k, v = c.Next() {
				if len(k) != 8 {
					continue
				}
				num := binary.BigEndian.Uint64(k)
				if err := decodeRaw(num, v, &raw); err != nil {
					return err
				}
				if err := setListIndexUpto(tx, num+1); err != nil {
					return err
				}
				if err := indexList(tx, raw.materialize(), nil); err != nil {
					return err
				}
				if err := refreshReady(tx, num); err != nil {
					return err
				}
				n++
			}
			if k != nil {
				return nil
			}
			done = true
			return setListIndexUpto(tx, listIndexBuilt)
		})
		if err != nil {
			return err
		}
	}
	return s.dropUnstoredVariants()
}

func setListIndexUpto(tx kv.Tx, upto uint64) error {
	return tx.Bucket([]byte(store.BucketMeta)).Put(metaListIndexUpto, store.U64(upto))
}

// metaUnstoredDropped marks a store whose sorted index holds no entries of
// the variants storedVariant no longer writes (a store indexed by an
// earlier release has every order).
var metaUnstoredDropped = []byte("sorted_unstored_dropped")

// dropUnstoredVariants deletes the entries of the index variants no longer
// written, rebuildBatch×16 keys per transaction, then marks the store. No
// list reads them, so a drop cut short only leaves dead keys until the
// next open.
func (s *Service) dropUnstoredVariants() error {
	for done := false; !done; {
		err := s.st.Update(func(tx kv.Tx) error {
			meta := tx.Bucket([]byte(store.BucketMeta))
			if meta.Get(metaUnstoredDropped) != nil {
				done = true
				return nil
			}
			b := tx.Bucket([]byte(store.BucketTaskSorted))
			var keys [][]byte
			for v := byte(0); v < byte(len(SortKeys)*2) && len(keys) < rebuildBatch*16; v++ {
				if storedVariant(v) {
					continue
				}
				c := b.Cursor()
				for k, _ := c.Seek([]byte{v}); k != nil && k[0] == v && len(keys) < rebuildBatch*16; k, _ = c.Next() {
					keys = append(keys, append([]byte(nil), k...))
				}
			}
			for _, k := range keys {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			if len(keys) > 0 {
				return nil
			}
			done = true
			return meta.Put(metaUnstoredDropped, []byte{1})
		})
		if err != nil {
			return err
		}
	}
	return nil
}
