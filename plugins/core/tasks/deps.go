package tasks

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Dependencies between tasks (D27): a task depends_on other tasks of its
// project and is ready once each of them is done or cancelled. Edges live in
// two indexes written together: task_deps (task, dep → the dep's status
// code) and task_dependents (dep, task). The status code beside each edge
// lets "open dependencies" count without decoding a task.

// MaxDependsOn bounds depends_on.
const MaxDependsOn = 50

// EventUnblocked is published when a task's last open dependency finishes.
const EventUnblocked = "task.unblocked"

func pairKey(a, b uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, a)
	binary.BigEndian.PutUint64(k[8:], b)
	return k
}

func isOpen(code uint8) bool { return code != codeDone && code != codeCancelled }

// checkDependsOn validates the shape of a depends_on list and returns its
// numbers, duplicates dropped, in the order given.
func checkDependsOn(ids []string) ([]uint64, error) {
	if len(ids) > MaxDependsOn {
		return nil, errs.Invalidf("depends_on", "maxItems", "a task depends on at most %d tasks, got %d; depend on a parent task that groups them instead", MaxDependsOn, len(ids))
	}
	out := make([]uint64, 0, len(ids))
	seen := map[uint64]bool{}
	for i, id := range ids {
		n, err := checkTaskID(fmt.Sprintf("depends_on[%d]", i), id)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// loadDeps checks that every dependency exists in project and returns their
// status codes, in the order of deps.
func loadDeps(tx kv.Tx, project string, deps []uint64) ([]uint8, error) {
	codes := make([]uint8, len(deps))
	for i, d := range deps {
		r, ok, err := loadRecord(tx, d)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errs.NotFoundf(errs.TaskNotFound, "depends_on", "dependency %s does not exist; find task ids with task_list", FormatTaskID(d)).With("task_id", FormatTaskID(d))
		}
		if r.project != project {
			return nil, errs.Invalidf("depends_on", "same_project", "dependency %s belongs to project %q, not %q; a task depends only on tasks of its own project", r.id(), r.project, project).With("task_id", r.id())
		}
		codes[i] = r.status
	}
	return codes, nil
}

// depsOf lists the dependencies of num in number order.
func depsOf(tx kv.Tx, num uint64) []uint64 {
	c := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	prefix := store.U64(num)
	var out []uint64
	for k, _ := c.Seek(prefix); len(k) == 16 && string(k[:8]) == string(prefix); k, _ = c.Next() {
		out = append(out, binary.BigEndian.Uint64(k[8:]))
	}
	return out
}

// dependentsOf lists the tasks that depend on num, in number order.
func dependentsOf(tx kv.Tx, num uint64) []uint64 {
	c := tx.Bucket([]byte(store.BucketTaskDependents)).Cursor()
	prefix := store.U64(num)
	var out []uint64
	for k, _ := c.Seek(prefix); len(k) == 16 && string(k[:8]) == string(prefix); k, _ = c.Next() {
		out = append(out, binary.BigEndian.Uint64(k[8:]))
	}
	return out
}

// openDeps returns the open dependencies of num (nil when none), through c,
// a cursor on BucketTaskDeps.
func openDeps(c kv.Cursor, num uint64) []uint64 {
	var prefix [8]byte
	binary.BigEndian.PutUint64(prefix[:], num)
	var out []uint64
	for k, v := c.Seek(prefix[:]); len(k) == 16 && [8]byte(k[:8]) == prefix; k, v = c.Next() {
		if len(v) == 1 && isOpen(v[0]) {
			out = append(out, binary.BigEndian.Uint64(k[8:]))
		}
	}
	return out
}

// findCycle reports the loop that making task depend on deps would close:
// the ids from task through the dependency chain back to (not repeating)
// task, or nil. It walks depends_on edges from each new dependency looking
// for task; the stored edges of task itself are ignored, since deps
// replaces them.
func findCycle(tx kv.Tx, task uint64, deps []uint64) []uint64 {
	c := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	from := map[uint64]uint64{} // visited node → the node that reached it
	for _, d := range deps {
		if d == task {
			return []uint64{task}
		}
		if _, seen := from[d]; seen {
			continue
		}
		from[d] = task
		stack := []uint64{d}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			var prefix [8]byte
			binary.BigEndian.PutUint64(prefix[:], n)
			for k, _ := c.Seek(prefix[:]); len(k) == 16 && [8]byte(k[:8]) == prefix; k, _ = c.Next() {
				m := binary.BigEndian.Uint64(k[8:])
				if m == task {
					// Walk back from n to task, then reverse.
					loop := []uint64{}
					for x := n; x != task; x = from[x] {
						loop = append(loop, x)
					}
					loop = append(loop, task)
					for i, j := 0, len(loop)-1; i < j; i, j = i+1, j-1 {
						loop[i], loop[j] = loop[j], loop[i]
					}
					return loop
				}
				if _, seen := from[m]; !seen {
					from[m] = n
					stack = append(stack, m)
				}
			}
		}
	}
	return nil
}

func cycleError(loop []uint64) error {
	ids := make([]string, len(loop))
	for i, n := range loop {
		ids[i] = FormatTaskID(n)
	}
	path := strings.Join(append(append([]string{}, ids...), ids[0]), " → ")
	return errs.Conflictf(errs.CircularDependency, "depends_on would close a loop: %s; a task cannot wait on itself, directly or through other tasks. Remove one of these dependencies", path).
		With("field", "depends_on").With("cycle", ids)
}

// setDeps replaces the dependencies of task num (in project) with deps,
// whose status codes are codes. The caller has validated them.
func setDeps(tx kv.Tx, num uint64, deps []uint64, codes []uint8) error {
	db := tx.Bucket([]byte(store.BucketTaskDeps))
	rb := tx.Bucket([]byte(store.BucketTaskDependents))
	for _, old := range depsOf(tx, num) {
		if err := db.Delete(pairKey(num, old)); err != nil {
			return err
		}
		if err := rb.Delete(pairKey(old, num)); err != nil {
			return err
		}
	}
	return addDeps(tx, num, deps, codes)
}

// addDeps records the dependencies of a task that has none yet: a new one,
// whose edges need no lookup (a round trip on PostgreSQL).
func addDeps(tx kv.Tx, num uint64, deps []uint64, codes []uint8) error {
	db := tx.Bucket([]byte(store.BucketTaskDeps))
	rb := tx.Bucket([]byte(store.BucketTaskDependents))
	for i, d := range deps {
		if err := db.Put(pairKey(num, d), []byte{codes[i]}); err != nil {
			return err
		}
		if err := rb.Put(pairKey(d, num), nil); err != nil {
			return err
		}
	}
	return refreshReady(tx, num)
}

// propagateStatus records num's new status code beside every edge that
// points at it and returns the dependents whose last open dependency num
// just was (task.unblocked).
func propagateStatus(tx kv.Tx, num uint64, was, now uint8) ([]uint64, error) {
	db := tx.Bucket([]byte(store.BucketTaskDeps))
	var unblocked []uint64
	finished := isOpen(was) && !isOpen(now)
	var dc kv.Cursor
	haveCursor := false
	for _, d := range dependentsOf(tx, num) {
		if err := db.Put(pairKey(d, num), []byte{now}); err != nil {
			return nil, err
		}
		if finished {
			if !haveCursor {
				dc, haveCursor = db.Cursor(), true
			}
			if len(openDeps(dc, d)) == 0 {
				unblocked = append(unblocked, d)
			}
		}
	}
	return unblocked, nil
}

func taskIDs(nums []uint64) []string {
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = FormatTaskID(n)
	}
	return out
}

func sortedNums(nums []uint64) []uint64 {
	out := append([]uint64(nil), nums...)
	slices.Sort(out)
	return out
}
