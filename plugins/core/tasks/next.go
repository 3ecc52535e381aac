package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
	bolt "go.etcd.io/bbolt"
)

// NextInput is the input of task_next_actions. Project must already be
// resolved by the caller (explicit argument, else CAIRN_PROJECT, else the
// client's last project — D7); an empty Project is a 404.
type NextInput struct {
	Project        string `json:"project"`
	Limit          *int   `json:"limit,omitempty"`
	IncludeBlocked *bool  `json:"include_blocked,omitempty"`
}

// NextAction is one candidate of task_next_actions.
type NextAction struct {
	TaskID            string   `json:"task_id"`
	Title             string   `json:"title"`
	Priority          string   `json:"priority"`
	Assignee          string   `json:"assignee"`
	EstimateHours     *float64 `json:"estimate_hours,omitempty"`
	ParentID          string   `json:"parent_id,omitempty"`
	DependenciesUnmet int      `json:"dependencies_unmet"`
}

// BlockedTask is one entry of task_next_actions' blocked list.
type BlockedTask struct {
	TaskID        string `json:"task_id"`
	Title         string `json:"title"`
	BlockedReason string `json:"blocked_reason"`
}

// NextOutput is the output of task_next_actions. Blocked is present (maybe
// empty) only when include_blocked was true.
type NextOutput struct {
	NextActions []NextAction  `json:"next_actions"`
	Count       int           `json:"count"`
	Project     string        `json:"project"`
	Blocked     []BlockedTask `json:"blocked,omitzero"`
}

// NextActions runs task_next_actions (D10): the project's todo tasks,
// ordered by priority desc, open sub-tasks asc, created_at asc, number asc.
// It reads only the project+status index, the todo tasks themselves and the
// children index, so its cost does not grow with the rest of the store.
func (s *Service) NextActions(in NextInput) (NextOutput, error) {
	if in.Project == "" {
		return NextOutput{}, errs.NotFoundf(errs.ProjectNotFound, "project", "no project given and no active project; pass project, or set CAIRN_PROJECT")
	}
	if err := checkSlug("project", in.Project); err != nil {
		return NextOutput{}, err
	}
	limit := DefaultNextLimit
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxNextLimit {
			c := "minimum"
			if *in.Limit > MaxNextLimit {
				c = "maximum"
			}
			return NextOutput{}, errs.Invalidf("limit", c, "limit must be between 1 and %d, got %d", MaxNextLimit, *in.Limit)
		}
		limit = *in.Limit
	}
	out := NextOutput{NextActions: []NextAction{}, Project: in.Project}
	err := s.st.View(func(tx *bolt.Tx) error {
		if !projectExists(tx, in.Project) {
			return projectNotFound(in.Project)
		}
		type cand struct {
			num      uint64
			priority uint8
			deps     int
			created  int64
		}
		var cands []cand
		var raw rawRecord
		children := tx.Bucket([]byte(store.BucketTaskChildren)).Cursor()
		err := scanStatus(tx, in.Project, StatusTodo, func(num uint64, v []byte) error {
			if err := decodeRaw(num, v, &raw); err != nil {
				return err
			}
			cands = append(cands, cand{num: num, priority: raw.priority, deps: openChildren(children, num), created: raw.createdMs})
			return nil
		})
		if err != nil {
			return err
		}
		slices.SortFunc(cands, func(a, b cand) int {
			switch {
			case a.priority != b.priority:
				return int(b.priority) - int(a.priority)
			case a.deps != b.deps:
				return a.deps - b.deps
			case a.created != b.created:
				if a.created < b.created {
					return -1
				}
				return 1
			case a.num < b.num:
				return -1
			case a.num > b.num:
				return 1
			}
			return 0
		})
		tc := tasksBucket(tx).Cursor()
		for _, c := range cands[:min(limit, len(cands))] {
			if err := decodeRaw(c.num, seekExact(tc, store.U64(c.num)), &raw); err != nil {
				return err
			}
			a := NextAction{
				TaskID:            FormatTaskID(c.num),
				Title:             string(raw.title),
				Priority:          priorityName(raw.priority),
				Assignee:          string(raw.assignee),
				DependenciesUnmet: c.deps,
			}
			if raw.hasEstimate {
				e := raw.estimate
				a.EstimateHours = &e
			}
			if raw.parent != 0 {
				a.ParentID = FormatTaskID(raw.parent)
			}
			out.NextActions = append(out.NextActions, a)
		}
		if in.IncludeBlocked != nil && *in.IncludeBlocked {
			out.Blocked = []BlockedTask{}
			return scanStatus(tx, in.Project, StatusBlocked, func(num uint64, v []byte) error {
				if err := decodeRaw(num, v, &raw); err != nil {
					return err
				}
				out.Blocked = append(out.Blocked, BlockedTask{TaskID: FormatTaskID(num), Title: string(raw.title), BlockedReason: string(raw.blockedReason)})
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return NextOutput{}, internal(err)
	}
	out.Count = len(out.NextActions)
	return out, nil
}

// scanStatus calls fn for every task of project in status, in number order.
func scanStatus(tx *bolt.Tx, project, status string, fn func(num uint64, v []byte) error) error {
	prefix := prefixProjectStatus(project, status)
	tc := tasksBucket(tx).Cursor()
	c := tx.Bucket([]byte(store.BucketTasksByProjectStatus)).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != len(prefix)+8 {
			continue
		}
		v := seekExact(tc, k[len(prefix):])
		if v == nil {
			continue
		}
		if err := fn(binary.BigEndian.Uint64(k[len(prefix):]), v); err != nil {
			return err
		}
	}
	return nil
}
