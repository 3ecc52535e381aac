package tasks

import (
	"encoding/binary"
	"fmt"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Deferred index entries. task_list's sorted indexes, counters and facets,
// and the by-project and by-status indexes, hold a task under a dozen
// keys in as many places of their trees: written in the task's own
// transaction they were more than half of the pages a task_create or a
// status change commits. So a write records its task in the pending
// bucket (one key, holding the state those indexes still hold for it) and
// the entries of many pending tasks are moved together, in one transaction
// that touches each page once, by the flusher that writes deferred trigram
// postings (searchpending.go). What the write path itself reads — the
// children and dependency edges, the ready index — is still written with
// the task. So is the search text (searchtext.go), rewritten from the
// task as its entries move.
//
// On PostgreSQL nothing is deferred: settling is a write, which there
// takes the writers' cluster-wide lock, and reads must not (D40).
//
// Reads stay exact: every reader of the deferred indexes goes through
// ViewSettled (or settles inside its write transaction), which moves what
// is pending first. task_list's indexes are deferred only for a task they
// cover; the background build (listbuild.go) indexes the others as they
// are then.

var bucketListPending = []byte(store.BucketTaskListPending)

// A pending entry's value: a flags byte, then the encoded record whose
// entries the by-project and by-status indexes hold (uvarint length first;
// absent when pendingStatusHeld is not set: a new task, none yet), then
// the encoded record whose entries task_list's indexes hold (when
// pendingListHeld is set).
const (
	pendingStatusHeld byte = 1 << iota
	// pendingListCovered: task_list's indexes cover the task and must
	// move from the list part (none held when pendingListHeld is unset).
	pendingListCovered
	pendingListHeld
)

// errMalformedPending reports a pending entry that does not decode.
func errMalformedPending(num uint64) error {
	return fmt.Errorf("tasks: the pending index entry of task %d does not decode", num)
}

// pendingEntry is a decoded pending value.
type pendingEntry struct {
	flags              byte
	heldStatus, heldLi *record
}

func (e pendingEntry) encode() []byte {
	v := []byte{e.flags}
	var st []byte
	if e.flags&pendingStatusHeld != 0 {
		st = e.heldStatus.encode()
	}
	v = binary.AppendUvarint(v, uint64(len(st)))
	v = append(v, st...)
	if e.flags&pendingListHeld != 0 {
		v = append(v, e.heldLi.encode()...)
	}
	return v
}

func decodePendingEntry(num uint64, v []byte) (pendingEntry, error) {
	if len(v) == 0 {
		return pendingEntry{}, errMalformedPending(num)
	}
	e := pendingEntry{flags: v[0]}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return pendingEntry{}, errMalformedPending(num)
	}
	st, li := v[1+w:1+w+int(n)], v[1+w+int(n):]
	decode := func(b []byte) (*record, error) {
		var raw rawRecord
		if err := decodeRaw(num, b, &raw); err != nil {
			return nil, err
		}
		return raw.materialize(), nil
	}
	var err error
	if e.flags&pendingStatusHeld != 0 {
		if e.heldStatus, err = decode(st); err != nil {
			return pendingEntry{}, err
		}
	}
	if e.flags&pendingListHeld != 0 {
		if e.heldLi, err = decode(li); err != nil {
			return pendingEntry{}, err
		}
	}
	return e, nil
}

// defersEntries reports whether tx's writes defer index entries: on bbolt,
// in a store with a pending bucket.
func defersEntries(tx kv.Tx) bool {
	return !tx.Shared() && tx.Bucket(bucketListPending).Exists()
}

// deferIndexes records that rec's deferred index entries must move from
// prev's (nil: a new task). A task already pending keeps the states its
// entry holds — the indexes still hold those, whatever happened since —
// except that a task task_list's indexes came to cover since (the
// background build indexed it as prev) starts its list part at prev.
func deferIndexes(tx kv.Tx, rec, prev *record) error {
	covered := listIndexCovers(tx, rec.num)
	if !defersEntries(tx) {
		// On PostgreSQL a read must never take the cluster-wide writers'
		// lock (docs/decisions.md D40), which settling would: the entries
		// move with the write there.
		if err := moveStatusEntries(tx, rec, prev); err != nil {
			return err
		}
		if covered {
			return indexList(tx, rec, prev)
		}
		return nil
	}
	b := tx.Bucket(bucketListPending)
	key := store.U64(rec.num)
	var e pendingEntry
	if v := b.Get(key); v != nil {
		var err error
		if e, err = decodePendingEntry(rec.num, v); err != nil {
			return err
		}
		if e.flags&pendingListCovered != 0 || !covered {
			return nil
		}
	} else if prev != nil {
		e.flags, e.heldStatus = pendingStatusHeld, prev
	}
	if covered {
		e.flags |= pendingListCovered
		if prev != nil {
			e.flags, e.heldLi = e.flags|pendingListHeld, prev
		}
	}
	return b.Put(key, e.encode())
}

// listPendingAny reports whether some task's entries are pending.
func listPendingAny(tx kv.Tx) bool {
	b := tx.Bucket(bucketListPending)
	if !b.Exists() {
		return false
	}
	k, _ := b.Cursor().First()
	return k != nil
}

// flushListPending moves the deferred entries of up to limit pending tasks
// (no limit when limit <= 0) and removes their entries; it returns how
// many it moved.
func flushListPending(tx kv.Tx, limit int) (int, error) {
	b := tx.Bucket(bucketListPending)
	if !b.Exists() {
		return 0, nil
	}
	type item struct {
		key []byte
		e   pendingEntry
	}
	var batch []item
	c := b.Cursor()
	for k, v := c.First(); k != nil && (limit <= 0 || len(batch) < limit); k, v = c.Next() {
		it := item{key: append([]byte(nil), k...)}
		if len(k) == 8 {
			var err error
			if it.e, err = decodePendingEntry(binary.BigEndian.Uint64(k), v); err != nil {
				return 0, err
			}
		}
		batch = append(batch, it)
	}
	for _, it := range batch {
		if len(it.key) == 8 {
			rec, ok, err := loadRecord(tx, binary.BigEndian.Uint64(it.key))
			if err != nil {
				return 0, err
			}
			if ok {
				if err := indexSearchText(tx, rec); err != nil {
					return 0, err
				}
				if err := moveStatusEntries(tx, rec, it.e.heldStatus); err != nil {
					return 0, err
				}
				if it.e.flags&pendingListCovered != 0 {
					if err := indexList(tx, rec, it.e.heldLi); err != nil {
						return 0, err
					}
				}
			}
		}
		if err := b.Delete(it.key); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

// settleIn moves every pending entry inside tx, a write transaction whose
// reads need the deferred indexes (a claim of the next action).
func settleIn(tx kv.Tx) error {
	if !listPendingAny(tx) {
		return nil
	}
	_, err := flushListPending(tx, 0)
	return err
}

// ViewSettled runs fn in a transaction in which the deferred indexes hold
// every committed write: a read transaction when nothing is pending (the
// usual case), else a write transaction that first moves what is pending.
// fn must only read.
func ViewSettled(st *store.Store, fn func(tx kv.Tx) error) error {
	pending := false
	err := st.View(func(tx kv.Tx) error {
		if listPendingAny(tx) {
			pending = true
			return nil
		}
		return fn(tx)
	})
	if err != nil || !pending {
		return err
	}
	return st.Update(func(tx kv.Tx) error {
		if _, err := flushListPending(tx, 0); err != nil {
			return err
		}
		return fn(tx)
	})
}
