package tasks

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// MaxMine bounds how many of a caller's open tasks Mine returns: a resume
// brief (docs/decisions.md D39) names what an agent holds, and an agent
// holding more than this is better served by task_list.
const MaxMine = 50

// MineTask is one open task a caller holds or is assigned, as task_context
// shows it (docs/decisions.md D39).
type MineTask struct {
	TaskID        string   `json:"task_id"`
	Title         string   `json:"title"`
	Project       string   `json:"project"`
	Status        string   `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review"`
	Priority      string   `json:"priority" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Claimed       bool     `json:"claimed"`
	UpdatedAt     string   `json:"updated_at"`
	BlockedReason string   `json:"blocked_reason,omitempty"`
	WaitingOn     []string `json:"waiting_on,omitzero" description:"Unmet dependencies."`
	// Approval is the task's approval request or decision, in a project
	// that requires one (docs/decisions.md D45).
	Approval *Approval `json:"approval,omitempty"`
}

// Mine lists the open tasks actor is assigned (a claim assigns the task to
// its holder, D27), claimed first, then by priority and most recently
// updated; total counts them all when more than MaxMine are open. It reads
// the actor's assignee facet (facets.go), so its cost follows the actor's
// tasks, not the store's size: member entries carry status and priority,
// and only the open tasks' records are read.
func (s *Service) Mine(actor string) (out []MineTask, total int, err error) {
	err = ViewSettled(s.st, func(tx kv.Tx) error {
		out, total, err = MineIn(tx, actor)
		return err
	})
	if err != nil {
		return nil, 0, internal(err)
	}
	return out, total, nil
}

// MineIn is Mine inside tx, for a reader that takes several views of the
// store in one snapshot (the resume brief); tx must be settled
// (ViewSettled), as it reads the assignee facet.
func MineIn(tx kv.Tx, actor string) (out []MineTask, total int, err error) {
	if actor == "" {
		return []MineTask{}, 0, nil
	}
	type cand struct {
		m       member
		claimed bool
	}
	var cands []cand
	err = func() error {
		scope := facetScope("", facetAssignee, []byte(actor))
		c := tx.Bucket([]byte(store.BucketTaskFacets)).Cursor()
		for k, v := c.Seek(scope); k != nil && bytes.HasPrefix(k, scope); k, v = c.Next() {
			if len(k) != len(scope)+8 {
				continue
			}
			m, ok := decodeMember(binary.BigEndian.Uint64(k[len(scope):]), v)
			if !ok || !isOpen(m.status) {
				continue
			}
			cands = append(cands, cand{m: m, claimed: claimHolder(tx, m.num) == actor})
		}
		total = len(cands)
		slices.SortFunc(cands, func(a, b cand) int {
			if a.claimed != b.claimed {
				if a.claimed {
					return -1
				}
				return 1
			}
			if a.m.priority != b.m.priority {
				return cmp.Compare(b.m.priority, a.m.priority)
			}
			if a.m.updatedMs != b.m.updatedMs {
				return cmp.Compare(b.m.updatedMs, a.m.updatedMs)
			}
			return cmp.Compare(a.m.num, b.m.num)
		})
		if len(cands) > MaxMine {
			cands = cands[:MaxMine]
		}
		deps := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
		out = make([]MineTask, 0, len(cands))
		for _, cd := range cands {
			rec, ok, err := loadRecord(tx, cd.m.num)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			t := MineTask{
				TaskID: rec.id(), Title: rec.title, Project: rec.project,
				Status: statusName(rec.status), Priority: priorityName(rec.priority),
				Claimed: cd.claimed, UpdatedAt: formatMillis(rec.updatedMs),
				BlockedReason: rec.blockedReason,
			}
			if open := openDeps(deps, rec.num); len(open) > 0 {
				t.WaitingOn = taskIDs(open)
			}
			if t.Approval, err = approvalOf(tx, rec); err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	}()
	return out, total, err
}
