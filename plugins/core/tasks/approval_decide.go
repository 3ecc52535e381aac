package tasks

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairn-mcp/cairn/internal/approval"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ApproveInput is task_approve's input (docs/decisions.md D45).
type ApproveInput struct {
	TaskID   string  `json:"task_id"`
	Decision string  `json:"decision"`
	Reason   *string `json:"reason,omitempty"`
	// Via is where the person decided; default cli.
	Via *string `json:"via,omitempty"`
	// CompleteMove moves an approved task in review to done at once
	// (default true); the host's bridge sends false and repeats the
	// agent's own update instead.
	CompleteMove *bool `json:"complete_move,omitempty"`
}

// ApproveOutput is task_approve's output: the decision as recorded, the
// task's status after it, and the thought record that links it into the
// task's chain.
type ApproveOutput struct {
	TaskID         string `json:"task_id"`
	Project        string `json:"project"`
	Mode           string `json:"mode" jsonschema:"enum=on,enum=strict"`
	Decision       string `json:"decision" jsonschema:"enum=approve,enum=reject"`
	State          string `json:"state" jsonschema:"enum=approved,enum=rejected"`
	By             string `json:"by"`
	At             string `json:"at"`
	Via            string `json:"via" jsonschema:"enum=dashboard,enum=cli,enum=elicitation,enum=input_request"`
	Reason         string `json:"reason,omitempty"`
	Status         string `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	PreviousStatus string `json:"previous_status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	// ThoughtID is the decision's record on the task's thought trail.
	ThoughtID string `json:"thought_id,omitempty"`
}

// DecisionRecord is a person's decision as the task's chain keeps it
// (Config.Decision).
type DecisionRecord struct {
	Num      uint64
	Content  string
	Metadata map[string]any
	Actor    string
	// At is the decision's time (D5 form), the record's recorded_at.
	At      string
	TraceID string
}

// approveArgs is task_approve's input checked: the task's number and the
// decision as internal/approval checks it.
type approveArgs struct {
	num uint64
	approval.Checked
}

func (in *ApproveInput) validate() (approveArgs, error) {
	var a approveArgs
	var err error
	if a.num, err = checkTaskID("task_id", in.TaskID); err != nil {
		return a, err
	}
	a.Checked, err = approval.Decision{Decision: in.Decision, Reason: in.Reason, Via: in.Via, CompleteMove: in.CompleteMove}.Check()
	return a, err
}

// Decide runs task_approve for call's actor: it records the person's
// decision on the task, moves the task as the decision says and links the
// decision into the task's thought trail, in one transaction.
func (s *Service) Decide(call Call, in ApproveInput) (ApproveOutput, error) {
	a, err := in.validate()
	if err != nil {
		return ApproveOutput{}, err
	}
	actor := actorOrUnknown(call.Actor)
	now := s.now()
	var (
		out      ApproveOutput
		events   []pending
		replayed bool
	)
	err = s.st.Commit(func(tx kv.Tx) error {
		events = nil
		var err error
		out, replayed, err = store.Once(tx, call.Idem, now, func() (ApproveOutput, error) {
			var out ApproveOutput
			var err error
			out, events, err = s.decideTx(tx, actor, call.TraceID, in.Decision, a, now)
			return out, err
		})
		return err
	})
	if err != nil {
		return ApproveOutput{}, internal(err)
	}
	if !replayed {
		s.deferred()
		s.publishAll(events)
	}
	return out, nil
}

func (s *Service) decideTx(tx kv.Tx, actor, traceID, decision string, a approveArgs, now time.Time) (ApproveOutput, []pending, error) {
	rec, ok, err := loadRecord(tx, a.num)
	if err != nil {
		return ApproveOutput{}, nil, err
	}
	if !ok {
		return ApproveOutput{}, nil, taskNotFound("task_id", FormatTaskID(a.num))
	}
	id := rec.id()
	from := statusName(rec.status)
	if rec.status == codeDone || rec.status == codeCancelled {
		return ApproveOutput{}, nil, errs.Conflictf(errs.Conflict, "task %s is %s, so there is nothing to decide", id, from).
			With("field", "task_id").With("status", from)
	}
	mode, err := modeOf(tx, rec.project)
	if err != nil {
		return ApproveOutput{}, nil, err
	}
	if mode == ApprovalOff {
		return ApproveOutput{}, nil, errs.Conflictf(errs.Conflict, "project %s does not require approval, so there is nothing to decide on %s; turn it on with `cairn project approval %s on`", rec.project, id, rec.project).
			With("field", "task_id").With("project", rec.project).With("mode", mode)
	}
	ar, _, err := loadApproval(tx, a.num)
	if err != nil {
		return ApproveOutput{}, nil, err
	}
	requester := rec.updatedBy
	if ar.State == ApprovalPending {
		requester = ar.RequestedBy
	}
	approver, err := a.Approver(actor, requester, mode, approval.Held{Field: "task_id", Move: id, Command: "cairn task approve " + id})
	if err != nil {
		return ApproveOutput{}, nil, err
	}
	to := from
	state := ApprovalApproved
	switch {
	case decision == DecisionApprove && a.CompleteMove && from == StatusReview:
		to = StatusDone
	case decision == DecisionReject:
		state = ApprovalRejected
		if from == StatusReview {
			// Back to work: the one move out of review the lifecycle
			// table does not list, made only by a rejection.
			to = StatusInProgress
		}
	}
	at := FormatTime(now)
	ar.State, ar.Decision, ar.DecidedBy, ar.DecidedAt, ar.Reason, ar.Via = state, decision, approver, at, a.Reason, a.Via
	if err := putApproval(tx, a.num, ar); err != nil {
		return ApproveOutput{}, nil, err
	}
	out := ApproveOutput{TaskID: id, Project: rec.project, Mode: mode, Decision: decision, State: state, By: approver, At: at, Via: a.Via, Reason: a.Reason, Status: to}
	var events []pending
	if to != from {
		out.PreviousStatus = from
		if events, err = s.decisionMove(tx, rec, to, approver, traceID, decision, a.Via, now); err != nil {
			return ApproveOutput{}, nil, err
		}
	}
	if s.cfg.Decision != nil {
		content := fmt.Sprintf("%s by %s via %s", map[string]string{DecisionApprove: "Approved", DecisionReject: "Rejected"}[decision], approver, a.Via)
		switch {
		case to != from:
			content += fmt.Sprintf(" (%s → %s)", from, to)
		case decision == DecisionApprove:
			content += fmt.Sprintf(" (in %s; its move to done may proceed)", from)
		}
		if a.Reason != "" {
			content += ": " + a.Reason
		}
		meta := map[string]any{"approval": map[string]any{"decision": decision, "from": from, "to": to, "via": a.Via, "reason": a.Reason}}
		thoughtID, typ, ev, err := s.cfg.Decision(tx, DecisionRecord{Num: a.num, Content: content, Metadata: meta, Actor: approver, At: at, TraceID: traceID})
		if err != nil {
			return ApproveOutput{}, nil, err
		}
		out.ThoughtID = thoughtID
		if ev != nil {
			events = append(events, pending{typ, ev})
		}
	}
	decided := map[string]any{"task_id": id, "project": rec.project, "decision": decision, "by": approver, "via": a.Via, "status": to}
	if err := s.record(tx, EventApprovalDecided, decided, now); err != nil {
		return ApproveOutput{}, nil, err
	}
	return out, append(events, pending{EventApprovalDecided, decided}), nil
}

// decisionMove moves task prev to status to for a person's decision, as
// task_update would: the record and its indexes, the event-chain link
// (which says which decision moved it) and the events.
func (s *Service) decisionMove(tx kv.Tx, prev *record, to, actor, traceID, decision, via string, now time.Time) ([]pending, error) {
	rec := *prev
	rec.labels = slices.Clone(prev.labels)
	from := statusName(prev.status)
	rec.status = statusCode(to)
	changed := []string{"status"}
	data := map[string]any{"status": to, "previous_status": from, "approval": map[string]any{"decision": decision, "via": via}}
	if to == StatusDone && rec.progress != MaxProgress {
		rec.progress = MaxProgress // done is finished (docs/decisions.md D8)
		changed = append(changed, "progress")
		data["progress"] = rec.progress
	}
	rec.updatedMs = now.UnixMilli()
	rec.updatedBy = actor
	unblocked, err := putRecord(tx, &rec, prev)
	if err != nil {
		return nil, err
	}
	at := formatMillis(rec.updatedMs)
	if s.cfg.OnChange != nil {
		if err := s.cfg.OnChange(tx, Change{TaskID: rec.id(), Num: rec.num, Kind: ChangeUpdated, Actor: actor, At: at, Data: data, TraceID: traceID}); err != nil {
			return nil, err
		}
	}
	events := []pending{{EventUpdated, map[string]any{
		"task_id": rec.id(), "project": rec.project, "status": to, "changed_fields": changed,
		"updated_by": actor, "previous_status": from,
	}}}
	for _, u := range unblocked {
		events = append(events, pending{EventUnblocked, map[string]any{"task_id": FormatTaskID(u), "project": rec.project, "finished_dependency": rec.id()}})
	}
	for _, e := range events {
		if err := s.record(tx, e.typ, e.data, now); err != nil {
			return nil, err
		}
	}
	return events, nil
}
