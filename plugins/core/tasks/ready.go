package tasks

import (
	"bytes"
	"encoding/binary"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// The ready index of task_next_actions. A todo task with no open
// dependency is ready; its key orders the project's ready tasks exactly as
// D10 does — priority desc, open sub-tasks (dependencies_unmet) asc,
// created asc, number asc — so limit 1 is one seek. A todo task with open
// dependencies sits in the waiting index instead, for include_blocked.
//
// Readiness is derived, not patched: every write that can change it (the
// task's status or priority, its dependencies, a sub-task's or a
// dependency's status) calls refreshReady on the tasks concerned inside its
// own transaction, which recomputes the entry from the stored task and
// edges and replaces the old one.

func readyPrefix(project string) []byte {
	k := make([]byte, 0, len(project)+1)
	k = append(k, project...)
	return append(k, 0)
}

func readyKey(rec *rawRecord, openKids int) []byte {
	k := readyPrefix(string(rec.project))
	k = append(k, 255-rec.priority)
	k = binary.BigEndian.AppendUint32(k, uint32(openKids))
	k = binary.BigEndian.AppendUint64(k, orderedInt(rec.createdMs))
	return binary.BigEndian.AppendUint64(k, rec.num)
}

func waitingKey(project []byte, num uint64) []byte {
	k := make([]byte, 0, len(project)+9)
	k = append(k, project...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, num)
}

// refreshReady recomputes task num's ready or waiting entry.
func refreshReady(tx kv.Tx, num uint64) error {
	if !listIndexCovers(tx, num) {
		return nil
	}
	v := tasksBucket(tx).Get(store.U64(num))
	if v == nil {
		return nil
	}
	var raw rawRecord
	if err := decodeRaw(num, v, &raw); err != nil {
		return err
	}
	var want []byte
	waiting := false
	if raw.status == statusCode(StatusTodo) {
		if len(openDeps(tx.Bucket([]byte(store.BucketTaskDeps)).Cursor(), num)) > 0 {
			waiting = true
		} else {
			want = readyKey(&raw, openChildren(tx.Bucket([]byte(store.BucketTaskChildren)).Cursor(), num))
		}
	}
	wb := tx.Bucket([]byte(store.BucketTaskWaiting))
	if waiting {
		if err := wb.Put(waitingKey(raw.project, num), nil); err != nil {
			return err
		}
	} else if err := wb.Delete(waitingKey(raw.project, num)); err != nil {
		return err
	}
	rb := tx.Bucket([]byte(store.BucketTaskReady))
	of := tx.Bucket([]byte(store.BucketTaskReadyOf))
	old := of.Get(store.U64(num))
	if bytes.Equal(old, want) {
		return nil
	}
	if old != nil {
		if err := rb.Delete(old); err != nil {
			return err
		}
	}
	if want == nil {
		return of.Delete(store.U64(num))
	}
	if err := rb.Put(want, nil); err != nil {
		return err
	}
	return of.Put(store.U64(num), want)
}

// readyFirst returns up to limit ready tasks of project in D10 order, with
// their open sub-task counts.
func readyFirst(tx kv.Tx, project string, limit int) (nums []uint64, kids []int) {
	prefix := readyPrefix(project)
	c := tx.Bucket([]byte(store.BucketTaskReady)).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(nums) < limit; k, _ = c.Next() {
		rest := k[len(prefix):]
		if len(rest) != 1+4+8+8 {
			continue
		}
		kids = append(kids, int(binary.BigEndian.Uint32(rest[1:])))
		nums = append(nums, binary.BigEndian.Uint64(rest[13:]))
	}
	return nums, kids
}

// waitingTasks lists the todo tasks of project that wait on dependencies,
// in number order.
func waitingTasks(tx kv.Tx, project string) []uint64 {
	prefix := readyPrefix(project)
	c := tx.Bucket([]byte(store.BucketTaskWaiting)).Cursor()
	var out []uint64
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			out = append(out, binary.BigEndian.Uint64(k[len(prefix):]))
		}
	}
	return out
}
