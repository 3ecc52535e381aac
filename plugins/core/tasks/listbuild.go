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
	}); err != nil || upto == listIndexBuilt {
		return err
	}
	if upto == 0 {
		// First build: start from empty indexes whatever a crashed
		// earlier attempt without the meta key left.
		if err := s.st.Update(func(tx kv.Tx) error {
			if listIndexUpto(tx) != 0 {
				return nil // another server started the build meanwhile
			}
			for _, name := range []string{store.BucketTaskSorted, store.BucketTaskCounts, store.BucketTaskReady, store.BucketTaskReadyOf, store.BucketTaskWaiting, store.BucketTaskFacets} {
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
		err := s.st.Update(func(tx kv.Tx) error {
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
	return nil
}

func setListIndexUpto(tx kv.Tx, upto uint64) error {
	return tx.Bucket([]byte(store.BucketMeta)).Put(metaListIndexUpto, store.U64(upto))
}
