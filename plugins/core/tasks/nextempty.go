package tasks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// EmptyBecause says why task_next_actions offers nothing: where the
// project's open tasks are instead, so an agent need not look for them
// (docs/decisions.md D10). It is present only when next_actions is empty.
type EmptyBecause struct {
	// Backlog tasks are not offered until they move to todo.
	Backlog int `json:"backlog"`
	// WaitingOnDependencies counts todo tasks with open depends_on.
	WaitingOnDependencies int `json:"waiting_on_dependencies"`
	Blocked               int `json:"blocked"`
	// ClaimedByOthers counts in_progress tasks another caller holds.
	ClaimedByOthers int `json:"claimed_by_others"`
	InProgress      int `json:"in_progress"`
	InReview        int `json:"in_review"`
	// Hint says in words what to do about the counts.
	Hint string `json:"hint"`
}

// emptyBecause counts project's open tasks that task_next_actions does not
// offer to actor; it runs only when the answer is empty, so the common,
// non-empty answer costs nothing more.
func emptyBecause(tx kv.Tx, project, actor string) *EmptyBecause {
	e := &EmptyBecause{}
	depc := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	eachInStatus(tx, project, StatusTodo, func(num uint64) {
		if len(openDeps(depc, num)) > 0 {
			e.WaitingOnDependencies++
		}
	})
	eachInStatus(tx, project, StatusInProgress, func(num uint64) {
		e.InProgress++
		if h := claimHolder(tx, num); h != "" && h != actor {
			e.ClaimedByOthers++
		}
	})
	eachInStatus(tx, project, StatusBacklog, func(uint64) { e.Backlog++ })
	eachInStatus(tx, project, StatusBlocked, func(uint64) { e.Blocked++ })
	eachInStatus(tx, project, StatusReview, func(uint64) { e.InReview++ })
	e.Hint = e.hint()
	return e
}

func (e *EmptyBecause) hint() string {
	var parts []string
	if e.Backlog > 0 {
		parts = append(parts, fmt.Sprintf("%d in backlog: move them to todo (task_update status: todo) to have them offered", e.Backlog))
	}
	if e.WaitingOnDependencies > 0 {
		parts = append(parts, fmt.Sprintf("%d todo waiting on open dependencies (include_blocked: true lists them)", e.WaitingOnDependencies))
	}
	if e.Blocked > 0 {
		parts = append(parts, fmt.Sprintf("%d blocked", e.Blocked))
	}
	if e.InProgress > 0 {
		parts = append(parts, fmt.Sprintf("%d in progress, %d of them claimed by others", e.InProgress, e.ClaimedByOthers))
	}
	if e.InReview > 0 {
		parts = append(parts, fmt.Sprintf("%d in review", e.InReview))
	}
	if len(parts) == 0 {
		return "no ready tasks: the project has no open tasks; create one with task_create"
	}
	return "no ready tasks: " + strings.Join(parts, "; ")
}

// eachInStatus calls fn with the number of every task of project in
// status, from the status index alone.
func eachInStatus(tx kv.Tx, project, status string, fn func(num uint64)) {
	prefix := prefixProjectStatus(project, status)
	c := tx.Bucket([]byte(store.BucketTasksByProjectStatus)).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) == len(prefix)+8 {
			fn(binary.BigEndian.Uint64(k[len(prefix):]))
		}
	}
}
