package tasks

import (
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
