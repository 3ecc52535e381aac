package tasks

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// NextInput is the input of task_next_actions. Project must already be
// resolved by the caller (explicit argument, else CAIRN_PROJECT, else the
// client's last project — D7); an empty Project is a 404.
type NextInput struct {
	Project        string `json:"project"`
	Limit          *int   `json:"limit,omitempty"`
	IncludeBlocked *bool  `json:"include_blocked,omitempty"`
	// Claim takes the first candidate for the caller in the same
	// transaction (D27) and returns only it.
	Claim *bool `json:"claim,omitempty"`
}

// NextAction is one candidate of task_next_actions.
type NextAction struct {
	TaskID            string   `json:"task_id"`
	Title             string   `json:"title"`
	Priority          string   `json:"priority" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
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
	// WaitingOn lists the open dependencies of a todo task that is not
	// ready yet (D27); absent for tasks in status blocked.
	WaitingOn []string `json:"waiting_on,omitempty"`
}

// NextOutput is the output of task_next_actions. Blocked is present (maybe
// empty) only when include_blocked was true.
type NextOutput struct {
	NextActions []NextAction  `json:"next_actions"`
	Count       int           `json:"count"`
	Project     string        `json:"project"`
	Blocked     []BlockedTask `json:"blocked,omitzero"`
	// Claimed is the id of the task a claim: true call took, if any.
	Claimed string `json:"claimed,omitempty"`
	// EmptyBecause says where the open tasks are when NextActions is
	// empty; absent otherwise.
	EmptyBecause *EmptyBecause `json:"empty_because,omitempty"`
}

// NextActions runs task_next_actions; see NextActionsFor.
func (s *Service) NextActions(in NextInput) (NextOutput, error) {
	return s.NextActionsFor(Call{}, in)
}

// NextActionsFor runs task_next_actions (D10, D27): the project's todo
// tasks whose dependencies are all done or cancelled, ordered by priority
// desc, dependencies_unmet asc, created_at asc, number asc. With claim it
// takes the first of them for call.Actor in one write transaction.
func (s *Service) NextActionsFor(call Call, in NextInput) (NextOutput, error) {
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
	includeBlocked := in.IncludeBlocked != nil && *in.IncludeBlocked
	if in.Claim != nil && *in.Claim {
		return s.claimNext(call, in.Project, includeBlocked)
	}
	var out NextOutput
	err := ViewSettled(s.st, func(tx kv.Tx) error {
		var err error
		out, err = nextTx(tx, call, in.Project, limit, includeBlocked)
		return err
	})
	if err != nil {
		return NextOutput{}, internal(err)
	}
	return out, nil
}

// NextActionsIn is the first limit of project's next actions inside tx,
// for a reader that takes several views of the store in one snapshot (the
// resume brief); tx must be settled (ViewSettled) and limit checked.
func NextActionsIn(tx kv.Tx, project string, limit int) (NextOutput, error) {
	if err := checkSlug("project", project); err != nil {
		return NextOutput{}, err
	}
	return nextTx(tx, Call{}, project, limit, false)
}

// claimNext takes the first candidate for call.Actor: the read and the
// claim share one write transaction, so concurrent claimers never get the
// same task.
func (s *Service) claimNext(call Call, project string, includeBlocked bool) (NextOutput, error) {
	actor := actorOrUnknown(call.Actor)
	now := s.now()
	var (
		out      NextOutput
		events   []pending
		replayed bool
	)
	err := s.st.Commit(func(tx kv.Tx) error {
		events = nil
		var err error
		out, replayed, err = store.Once(tx, call.Idem, now, func() (NextOutput, error) {
			if err := settleIn(tx); err != nil {
				return NextOutput{}, err
			}
			out, err := nextTx(tx, call, project, 1, includeBlocked)
			if err != nil || len(out.NextActions) == 0 {
				return out, err
			}
			first := &out.NextActions[0]
			upd := UpdateInput{TaskID: first.TaskID, Claim: ptrBool(true)}
			num, _ := ParseTaskID(first.TaskID)
			if _, events, err = s.updateTx(tx, actor, call.TraceID, &upd, num, nil, now); err != nil {
				return NextOutput{}, err
			}
			first.Assignee = actor
			out.Claimed = first.TaskID
			return out, nil
		})
		return err
	})
	if err != nil {
		return NextOutput{}, internal(err)
	}
	if !replayed {
		s.publishAll(events)
	}
	return out, nil
}

func ptrBool(b bool) *bool { return &b }

// nextTx computes task_next_actions inside tx; an empty answer says why.
func nextTx(tx kv.Tx, call Call, project string, limit int, includeBlocked bool) (NextOutput, error) {
	out, err := nextReady(tx, call, project, limit, includeBlocked)
	if err == nil && out.Count == 0 {
		out.EmptyBecause = emptyBecause(tx, project, actorOrUnknown(call.Actor))
	}
	return out, err
}

// nextReady lists the ready tasks of task_next_actions inside tx.
func nextReady(tx kv.Tx, call Call, project string, limit int, includeBlocked bool) (NextOutput, error) {
	out := NextOutput{NextActions: []NextAction{}, Project: project}
	if !projectKnown(tx, project, call) {
		return out, projectNotFound(project)
	}
	if listIndexReady(tx) {
		return nextIndexed(tx, project, limit, includeBlocked, out)
	}
	type cand struct {
		num      uint64
		priority uint8
		deps     int
		created  int64
	}
	var cands []cand
	var waiting []BlockedTask
	var raw rawRecord
	children := tx.Bucket([]byte(store.BucketTaskChildren)).Cursor()
	depc := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	err := scanStatus(tx, project, StatusTodo, func(num uint64, v []byte) error {
		if err := decodeRaw(num, v, &raw); err != nil {
			return err
		}
		if open := openDeps(depc, num); len(open) > 0 {
			if includeBlocked {
				ids := taskIDs(open)
				waiting = append(waiting, BlockedTask{TaskID: FormatTaskID(num), Title: string(raw.title),
					BlockedReason: "waiting on " + strings.Join(ids, ", "), WaitingOn: ids})
			}
			return nil
		}
		cands = append(cands, cand{num: num, priority: raw.priority, deps: openChildren(children, num), created: raw.createdMs})
		return nil
	})
	if err != nil {
		return out, err
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
			return out, err
		}
		out.NextActions = append(out.NextActions, nextAction(&raw, c.deps))
	}
	out.Count = len(out.NextActions)
	if includeBlocked {
		out.Blocked = []BlockedTask{}
		err := scanStatus(tx, project, StatusBlocked, func(num uint64, v []byte) error {
			if err := decodeRaw(num, v, &raw); err != nil {
				return err
			}
			out.Blocked = append(out.Blocked, BlockedTask{TaskID: FormatTaskID(num), Title: string(raw.title), BlockedReason: string(raw.blockedReason)})
			return nil
		})
		if err != nil {
			return out, err
		}
		out.Blocked = append(out.Blocked, waiting...)
	}
	return out, nil
}

// nextIndexed is nextTx over the ready and waiting indexes: the first
// limit ready tasks are one seek, and include_blocked costs the project's
// blocked and waiting tasks, not its todo tasks.
func nextIndexed(tx kv.Tx, project string, limit int, includeBlocked bool, out NextOutput) (NextOutput, error) {
	nums, kids := readyFirst(tx, project, limit)
	tc := tasksBucket(tx).Cursor()
	var raw rawRecord
	for i, num := range nums {
		if err := decodeRaw(num, seekExact(tc, store.U64(num)), &raw); err != nil {
			return out, err
		}
		out.NextActions = append(out.NextActions, nextAction(&raw, kids[i]))
	}
	out.Count = len(out.NextActions)
	if !includeBlocked {
		return out, nil
	}
	out.Blocked = []BlockedTask{}
	err := scanStatus(tx, project, StatusBlocked, func(num uint64, v []byte) error {
		if err := decodeRaw(num, v, &raw); err != nil {
			return err
		}
		out.Blocked = append(out.Blocked, BlockedTask{TaskID: FormatTaskID(num), Title: string(raw.title), BlockedReason: string(raw.blockedReason)})
		return nil
	})
	if err != nil {
		return out, err
	}
	depc := tx.Bucket([]byte(store.BucketTaskDeps)).Cursor()
	for _, num := range waitingTasks(tx, project) {
		if err := decodeRaw(num, seekExact(tc, store.U64(num)), &raw); err != nil {
			return out, err
		}
		ids := taskIDs(openDeps(depc, num))
		out.Blocked = append(out.Blocked, BlockedTask{TaskID: FormatTaskID(num), Title: string(raw.title),
			BlockedReason: "waiting on " + strings.Join(ids, ", "), WaitingOn: ids})
	}
	return out, nil
}

func nextAction(raw *rawRecord, openKids int) NextAction {
	a := NextAction{
		TaskID:            FormatTaskID(raw.num),
		Title:             string(raw.title),
		Priority:          priorityName(raw.priority),
		Assignee:          string(raw.assignee),
		DependenciesUnmet: openKids,
	}
	if raw.hasEstimate {
		e := raw.estimate
		a.EstimateHours = &e
	}
	if raw.parent != 0 {
		a.ParentID = FormatTaskID(raw.parent)
	}
	return a
}

// scanStatus calls fn for every task of project in status, in number order.
func scanStatus(tx kv.Tx, project, status string, fn func(num uint64, v []byte) error) error {
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
