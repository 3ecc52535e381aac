package tasks

import (
	"errors"
	"fmt"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Approval events (D19): a request recorded by a refused move, and a
// person's decision.
const (
	EventApprovalRequested = "task.approval_requested"
	EventApprovalDecided   = "task.approval_decided"
)

// approvalRefusal is the 428 of a move to done that waits for a person
// (docs/decisions.md D45), with what its pending request records. The
// refused update rolls back, so its idempotency key keeps no outcome and
// the same call, retried once a person approved, runs again; the request
// is written after, in a transaction of its own (requestApproval).
type approvalRefusal struct {
	err     *errs.Error
	num     uint64
	project string
	mode    string
	from    string
}

func (r *approvalRefusal) Error() string { return r.err.Error() }

// gateDone decides, before the update writes anything, whether actor's
// move of task num to done waits for a person. A missing task, a task
// already done, and a move the lifecycle refuses anyway are left to the
// update, which answers them as it always has.
func gateDone(tx kv.Tx, num uint64, actor string) error {
	rec, ok, err := loadRecord(tx, num)
	if err != nil || !ok || rec.status == codeDone {
		return err
	}
	from := statusName(rec.status)
	if !CanTransition(from, StatusDone) {
		return nil
	}
	mode, err := modeOf(tx, rec.project)
	if err != nil || mode == ApprovalOff {
		return err
	}
	ar, found, err := loadApproval(tx, num)
	if err != nil {
		return err
	}
	if found && ar.State == ApprovalApproved {
		return nil // a standing approval lets the move through
	}
	return &approvalRefusal{err: approvalRequired(rec, mode, from, actor, ar), num: num, project: rec.project, mode: mode, from: from}
}

// approvalRequired is the refusal the agent reads: where a person
// approves, the question the host may put to the person at the client,
// and the internal tool that records the answer. A last rejection rides
// along so the agent sees why.
func approvalRequired(rec *record, mode, from, actor string, ar approvalRecord) *errs.Error {
	id := rec.id()
	where := fmt.Sprintf("the dashboard's Approvals page (cairn ui --allow-actions) or `cairn task approve %s`", id)
	msg := fmt.Sprintf("%s needs a person's approval to move to done (project %s, approval %s): a person approves it in %s; then send this update again", id, rec.project, mode, where)
	if ar.Decision == DecisionReject {
		msg += fmt.Sprintf(". It was last rejected by %s: %s", ar.DecidedBy, clip(ar.Reason))
	}
	e := errs.New(428, errs.ApprovalRequired, msg).
		With("task_id", id).
		With("project", rec.project).
		With("mode", mode).
		With("ask_client", mode == ApprovalOn).
		With("question", fmt.Sprintf("Approve %s “%s” (%s → done), asked by %s?", id, rec.title, from, actor)).
		With("approve", map[string]any{"tool": ApproveTool, "args": map[string]any{"task_id": id}}).
		With("where", where)
	if ar.Decision == DecisionReject {
		e = e.With("rejected", map[string]any{"by": ar.DecidedBy, "at": ar.DecidedAt, "reason": ar.Reason})
	}
	return e
}

// refusedForApproval turns a refusal of the update's transaction into the
// 428 it answers, recording its pending request first; any other error
// comes back as it is.
func (s *Service) refusedForApproval(actor string, err error) error {
	var r *approvalRefusal
	if !errors.As(err, &r) {
		return err
	}
	if werr := s.requestApproval(actor, r); werr != nil {
		return internal(werr)
	}
	return r.err
}

// requestApproval records actor's pending request for r's task so people
// see it (task_approvals, the dashboard), unless a person approved
// meanwhile or the same request already waits.
func (s *Service) requestApproval(actor string, r *approvalRefusal) error {
	now := s.now()
	var ev map[string]any
	err := s.st.Commit(func(tx kv.Tx) error {
		ev = nil
		ar, _, err := loadApproval(tx, r.num)
		if err != nil {
			return err
		}
		if ar.State == ApprovalApproved || (ar.State == ApprovalPending && ar.RequestedBy == actor && ar.From == r.from) {
			return nil
		}
		ar.State, ar.RequestedBy, ar.RequestedAt, ar.From = ApprovalPending, actor, FormatTime(now), r.from
		if err := putApproval(tx, r.num, ar); err != nil {
			return err
		}
		ev = map[string]any{"task_id": FormatTaskID(r.num), "project": r.project, "mode": r.mode, "requested_by": actor, "from": r.from}
		return s.record(tx, EventApprovalRequested, ev, now)
	})
	if err == nil && ev != nil {
		s.publish(EventApprovalRequested, ev)
	}
	return err
}
