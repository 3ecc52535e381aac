package tasks

import (
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// Deferred list indexes. task_list's sorted indexes, counters
// and facets hold a task under a dozen keys in as many places of their
// trees: written in the task's own transaction they were more than half
// of the pages a task_create or a status change commits. So a write
// records its task in the list-pending bucket (one key, holding the state
// the indexes still hold for it) and the entries of many pending tasks are
// moved together, in one transaction that touches each page once, by the
// flusher that writes deferred trigram postings (searchpending.go).
//
// Reads stay exact: every reader of those indexes goes through
// ViewSettled, which moves what is pending first, in the transaction that
// reads. Only writes whose task the index covers are deferred; the
// background build (listbuild.go) indexes the others as they are then.

var bucketListPending = []byte(store.BucketTaskListPending)

// A list-pending entry's value: listHeldNone when the indexes hold nothing
// for the task (it is new), listHeld followed by the encoded record whose
// entries they hold.
const (
	listHeldNone byte = 0
	listHeld     byte = 1
)

// deferList records that rec's list entries must move from prev's (nil: a
// new task). A task already pending keeps its entry: the indexes still
// hold the state written there, whatever happened since.
func deferList(tx kv.Tx, rec, prev *record) error {
	if !listIndexCovers(tx, rec.num) {
		return nil
	}
	b := tx.Bucket(bucketListPending)
	key := store.U64(rec.num)
	if b.Get(key) != nil {
		return nil
	}
	if prev == nil {
		return b.Put(key, []byte{listHeldNone})
	}
	return b.Put(key, append([]byte{listHeld}, prev.encode()...))
}

// listPendingAny reports whether some task's list entries are pending.
func listPendingAny(tx kv.Tx) bool {
	b := tx.Bucket(bucketListPending)
	if !b.Exists() {
		return false
	}
	k, _ := b.Cursor().First()
	return k != nil
}

// flushListPending moves the list entries of up to limit pending tasks (no
// limit when limit <= 0) and removes their entries; it returns how many it
// moved.
func flushListPending(tx kv.Tx, limit int) (int, error) {
	b := tx.Bucket(bucketListPending)
	if !b.Exists() {
		return 0, nil
	}
	type entry struct {
		key  []byte
		held *record
	}
	var batch []entry
	c := b.Cursor()
	for k, v := c.First(); k != nil && (limit <= 0 || len(batch) < limit); k, v = c.Next() {
		e := entry{key: append([]byte(nil), k...)}
		if len(k) == 8 && len(v) > 1 && v[0] == listHeld {
			var raw rawRecord
			if err := decodeRaw(binary.BigEndian.Uint64(k), v[1:], &raw); err != nil {
				return 0, err
			}
			e.held = raw.materialize()
		}
		batch = append(batch, e)
	}
	for _, e := range batch {
		if len(e.key) == 8 {
			rec, ok, err := loadRecord(tx, binary.BigEndian.Uint64(e.key))
			if err != nil {
				return 0, err
			}
			if ok {
				if err := indexList(tx, rec, e.held); err != nil {
					return 0, err
				}
			}
		}
		if err := b.Delete(e.key); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

// ViewSettled runs fn in a transaction in which task_list's indexes hold
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
