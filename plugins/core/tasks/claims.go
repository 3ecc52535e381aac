package tasks

import (
	"encoding/binary"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Claims (D27): a claimed task is in_progress and held by one caller. The
// holder is stored beside the task (task_claims) and changes only inside the
// write transaction that checks it, so two callers racing for one task are
// serialized by bbolt and exactly one wins.

// Claim events (D19).
const (
	EventClaimed  = "task.claimed"
	EventReleased = "task.released"
)

// claimHolder returns who holds task num, or "".
func claimHolder(tx kv.Tx, num uint64) string {
	return string(tx.Bucket([]byte(store.BucketTaskClaims)).Get(store.U64(num)))
}

// setClaim records holder for num; an empty holder releases it.
func setClaim(tx kv.Tx, num uint64, holder string) error {
	b := tx.Bucket([]byte(store.BucketTaskClaims))
	if holder == "" {
		return b.Delete(store.U64(num))
	}
	return b.Put(store.U64(num), []byte(holder))
}

func claimedBy(taskID, holder string) *errs.Error {
	return errs.Conflictf(errs.Conflict, "task %s is claimed by %s; pick another task (task_next_actions with claim: true) or ask %s to release it", taskID, clip(holder), clip(holder)).
		With("task_id", taskID).With("holder", holder)
}

// openDependency is a dependency that is neither done nor cancelled, with
// its status, as a claim refusal names it.
type openDependency struct {
	TaskID string `json:"task_id"`
	Status string `json:"status"`
}

// openDependencies lists the open dependencies task num will have after
// the update: those given (deps with their status codes) when the update
// replaces them, else the stored ones.
func openDependencies(tx kv.Tx, num uint64, replaced bool, deps []uint64, codes []uint8) []openDependency {
	var out []openDependency
	if replaced {
		for i, d := range deps {
			if isOpen(codes[i]) {
				out = append(out, openDependency{FormatTaskID(d), statusName(codes[i])})
			}
		}
		return out
	}
	c := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	prefix := store.U64(num)
	for k, v := c.Seek(prefix); len(k) == 16 && string(k[:8]) == string(prefix); k, v = c.Next() {
		if len(v) == 1 && isOpen(v[0]) {
			out = append(out, openDependency{FormatTaskID(binary.BigEndian.Uint64(k[8:])), statusName(v[0])})
		}
	}
	return out
}

// waitsOn refuses a claim of a task whose dependencies are not all done
// (docs/decisions.md D27): the claimed task could not be finished first.
func waitsOn(taskID string, open []openDependency) *errs.Error {
	named := make([]string, len(open))
	for i, d := range open {
		named[i] = d.TaskID + " (" + d.Status + ")"
	}
	return errs.Conflictf(errs.Conflict, "task %s waits on %s; finish those first, take a ready task (task_next_actions), or pass force: true to claim it anyway", taskID, strings.Join(named, ", ")).
		With("field", "claim").With("task_id", taskID).With("open_dependencies", open)
}

// forcedClaim is how a forced claim's open dependencies are recorded in
// the update's chain link and event: "T-n (status)" each.
func forcedClaim(open []openDependency) []string {
	out := make([]string, len(open))
	for i, d := range open {
		out[i] = d.TaskID + " (" + d.Status + ")"
	}
	return out
}
