package tasks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// UpdateInput is the input of task_update. Every field but task_id is
// optional; Labels is a pointer so that an explicit [] (remove all labels)
// differs from an absent field.
type UpdateInput struct {
	TaskID        string    `json:"task_id"`
	Title         *string   `json:"title,omitempty"`
	Status        *string   `json:"status,omitempty"`
	Progress      *float64  `json:"progress,omitempty"`
	Description   *string   `json:"description,omitempty"`
	Priority      *string   `json:"priority,omitempty"`
	Assignee      *string   `json:"assignee,omitempty"`
	Labels        *[]string `json:"labels,omitempty"`
	BlockedReason *string   `json:"blocked_reason,omitempty"`
	// DependsOn replaces the task's dependencies (D27); [] removes them.
	DependsOn *[]string `json:"depends_on,omitempty"`
	// Claim takes the task for the caller: assignee = caller, status
	// in_progress; 409 ERR_CONFLICT when another caller holds it.
	Claim *bool `json:"claim,omitempty"`
	// Release gives a claim back (holder only): the task returns to todo,
	// unassigned, unless status says where it goes.
	Release *bool `json:"release,omitempty"`
	// Force claims a task whose dependencies are not all done; the open
	// ones are recorded in the trail (docs/decisions.md D27).
	Force *bool `json:"force,omitempty"`
}

// UpdateOutput is the output of task_update. PreviousStatus is set only when
// the status moved; Warnings only when there is something to say.
type UpdateOutput struct {
	TaskID         string   `json:"task_id"`
	Status         string   `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Progress       float64  `json:"progress"`
	UpdatedAt      string   `json:"updated_at"`
	UpdatedBy      string   `json:"updated_by"`
	PreviousStatus string   `json:"previous_status,omitempty" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Warnings       []string `json:"warnings,omitempty"`
	// ClaimedBy is the holder of the task's claim after the update, when
	// it is claimed.
	ClaimedBy string `json:"claimed_by,omitempty"`
}

func (in *UpdateInput) validate() (uint64, []uint64, error) {
	num, err := in.validateFields()
	if err != nil {
		return 0, nil, err
	}
	var deps []uint64
	if in.DependsOn != nil {
		if deps, err = checkDependsOn(*in.DependsOn); err != nil {
			return 0, nil, err
		}
	}
	claim, release := in.Claim != nil && *in.Claim, in.Release != nil && *in.Release
	switch {
	case claim && release:
		return 0, nil, errs.Invalid("release", "conflicts", "claim and release cannot be combined; send one of them")
	case claim && in.Status != nil && *in.Status != StatusInProgress:
		return 0, nil, errs.Invalidf("status", "conflicts", "a claim moves the task to in_progress; drop status %q or claim separately", clip(*in.Status))
	case claim && in.Assignee != nil:
		return 0, nil, errs.Invalid("assignee", "conflicts", "a claim assigns the task to the caller; drop assignee")
	case in.Force != nil && *in.Force && !claim:
		return 0, nil, errs.Invalid("force", "requires", "force only applies to claim: true; send claim: true with it, or drop force")
	case release && in.Status != nil && *in.Status == StatusInProgress:
		return 0, nil, errs.Invalid("status", "conflicts", "release takes the task out of in_progress; drop status or pick another")
	}
	return num, deps, nil
}

func (in *UpdateInput) validateFields() (uint64, error) {
	num, err := checkTaskID("task_id", in.TaskID)
	if err != nil {
		return 0, err
	}
	if in.Status != nil {
		if err := checkStatus("status", *in.Status); err != nil {
			return 0, err
		}
	}
	if in.Progress != nil {
		if err := checkRange("progress", *in.Progress, 0, MaxProgress); err != nil {
			return 0, err
		}
	}
	if in.Title != nil {
		if err := checkTitle(*in.Title); err != nil {
			return 0, err
		}
	}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return 0, err
		}
	}
	if in.Priority != nil {
		if err := checkPriority("priority", *in.Priority); err != nil {
			return 0, err
		}
	}
	if in.Assignee != nil {
		if err := checkUTF8("assignee", *in.Assignee); err != nil {
			return 0, err
		}
	}
	if in.Labels != nil {
		if err := checkLabels(*in.Labels); err != nil {
			return 0, err
		}
	}
	if in.BlockedReason != nil {
		if err := checkUTF8("blocked_reason", *in.BlockedReason); err != nil {
			return 0, err
		}
	}
	return num, nil
}

func invalidTransition(from, to string) error {
	allowed := AllowedTransitions(from)
	hint := "it is terminal and cannot move"
	if len(allowed) > 0 {
		hint = "allowed next states: " + strings.Join(allowed, ", ")
	}
	return errs.Newf(400, errs.InvalidTransition, "a task cannot move from %s to %s; %s", from, to, hint).
		With("field", "status").
		With("constraint", "transition").
		With("from", from).
		With("to", to).
		With("allowed", allowed)
}

// Update runs task_update for actor; see UpdateFor.
func (s *Service) Update(actor string, in UpdateInput) (UpdateOutput, error) {
	return s.UpdateFor(Call{Actor: actor}, in)
}

// UpdateFor runs task_update in one transaction (group commit). Setting the
// current status again is a no-op without previous_status (D8); when
// nothing changes at all nothing is written and no event is published.
func (s *Service) UpdateFor(call Call, in UpdateInput) (UpdateOutput, error) {
	num, deps, err := in.validate()
	if err != nil {
		return UpdateOutput{}, err
	}
	actor := actorOrUnknown(call.Actor)
	now := s.now()
	var (
		out      UpdateOutput
		events   []pending
		replayed bool
	)
	err = s.st.Commit(func(tx kv.Tx) error {
		events = nil
		var err error
		out, replayed, err = store.Once(tx, call.Idem, now, func() (UpdateOutput, error) {
			if in.Status != nil && *in.Status == StatusDone {
				// A move to done may wait for a person (approval.go).
				if err := gateDone(tx, num, actor); err != nil {
					return UpdateOutput{}, err
				}
			}
			var out UpdateOutput
			var err error
			out, events, err = s.updateTx(tx, actor, call.TraceID, &in, num, deps, now)
			return out, err
		})
		return err
	})
	if err != nil {
		return UpdateOutput{}, internal(s.refusedForApproval(actor, err))
	}
	if !replayed {
		s.deferred()
		s.publishAll(events)
	}
	return out, nil
}

// updateTx applies a validated update inside tx and returns the output and
// the events to publish after the commit. It decides every refusal before
// its first write (the group-commit contract).
func (s *Service) updateTx(tx kv.Tx, actor, traceID string, in *UpdateInput, num uint64, deps []uint64, now time.Time) (UpdateOutput, []pending, error) {
	prev, ok, err := loadRecord(tx, num)
	if err != nil {
		return UpdateOutput{}, nil, err
	}
	if !ok {
		return UpdateOutput{}, nil, taskNotFound("task_id", in.TaskID)
	}
	rec := *prev
	rec.labels = slices.Clone(prev.labels)
	var warnings []string
	changes := map[string]any{}
	var fields []string
	set := func(field string, v any) {
		fields = append(fields, field)
		changes[field] = v
	}

	from := statusName(prev.status)
	to := from
	if in.Status != nil {
		to = *in.Status
	}
	holder := claimHolder(tx, num)
	claim, release := in.Claim != nil && *in.Claim, in.Release != nil && *in.Release
	newHolder := holder
	switch {
	case claim:
		if holder != "" && holder != actor {
			return UpdateOutput{}, nil, claimedBy(rec.id(), holder)
		}
		to, newHolder = StatusInProgress, actor
		if rec.assignee != actor {
			rec.assignee = actor
			set("assignee", actor)
		}
	case release:
		if holder == "" {
			return UpdateOutput{}, nil, errs.Conflictf(errs.Conflict, "task %s is not claimed, so there is nothing to release", rec.id()).With("field", "release")
		}
		if holder != actor {
			return UpdateOutput{}, nil, claimedBy(rec.id(), holder).With("field", "release")
		}
		newHolder = ""
		if in.Status == nil && from == StatusInProgress {
			// Giving a claim back returns the task to the ready list: the one
			// move out of in_progress the transition table does not list.
			to = StatusTodo
		}
		if in.Assignee == nil && rec.assignee == actor {
			rec.assignee = DefaultAssignee
			set("assignee", DefaultAssignee)
		}
	}
	releaseMove := release && from == StatusInProgress && to == StatusTodo
	if to != from && !releaseMove && !CanTransition(from, to) {
		return UpdateOutput{}, nil, invalidTransition(from, to)
	}
	if to != StatusInProgress {
		newHolder = "" // leaving in_progress releases a claim
	}

	var depCodes []uint8
	depsChanged := false
	if in.DependsOn != nil {
		if depCodes, err = loadDeps(tx, rec.project, deps); err != nil {
			return UpdateOutput{}, nil, err
		}
		if loop := findCycle(tx, num, deps); loop != nil {
			return UpdateOutput{}, nil, cycleError(loop)
		}
		depsChanged = !slices.Equal(sortedNums(deps), depsOf(tx, num))
		if depsChanged {
			set("depends_on", taskIDs(sortedNums(deps)))
		}
	}
	// A new claim waits for the task's dependencies unless forced; a forced
	// one carries them into the chain link and the event.
	var forced []string
	if claim && holder != actor {
		if open := openDependencies(tx, num, in.DependsOn != nil, deps, depCodes); len(open) > 0 {
			if in.Force == nil || !*in.Force {
				return UpdateOutput{}, nil, waitsOn(rec.id(), open)
			}
			forced = forcedClaim(open)
		}
	}

	// blocked_reason: required on entering blocked, replaceable while
	// blocked, cleared on leaving, ignored (with a warning) otherwise.
	switch {
	case to == StatusBlocked:
		reason := rec.blockedReason
		if in.BlockedReason != nil {
			reason = *in.BlockedReason
		} else if from != StatusBlocked {
			reason = ""
		}
		if strings.TrimSpace(reason) == "" {
			return UpdateOutput{}, nil, errs.Invalid("blocked_reason", "required", "a blocked task needs a non-empty blocked_reason saying what blocks it")
		}
		if reason != rec.blockedReason {
			rec.blockedReason = reason
			set("blocked_reason", reason)
		}
	default:
		if rec.blockedReason != "" {
			rec.blockedReason = ""
			set("blocked_reason", nil)
		}
		if in.BlockedReason != nil && strings.TrimSpace(*in.BlockedReason) != "" {
			warnings = append(warnings, fmt.Sprintf("blocked_reason ignored: the task is %s, not blocked; set status to blocked together with blocked_reason to block it", to))
		}
	}
	if to != from {
		rec.status = statusCode(to)
		set("status", to)
	}
	progress := rec.progress
	if in.Progress != nil {
		progress = *in.Progress
	}
	// Done is finished: the move sets progress 100 (docs/decisions.md D8).
	if to == StatusDone && progress != MaxProgress {
		if in.Progress != nil {
			warnings = append(warnings, fmt.Sprintf("progress %g ignored: a done task's progress is 100", *in.Progress))
		}
		progress = MaxProgress
	}
	if progress != rec.progress {
		rec.progress = progress
		set("progress", rec.progress)
	}
	if in.Title != nil && *in.Title != rec.title {
		rec.title = *in.Title
		set("title", rec.title)
	}
	if in.Description != nil && *in.Description != rec.description {
		rec.description = *in.Description
		set("description", rec.description)
	}
	if in.Priority != nil && priorityCode(*in.Priority) != rec.priority {
		rec.priority = priorityCode(*in.Priority)
		set("priority", *in.Priority)
	}
	if in.Assignee != nil {
		a := *in.Assignee
		if a == "" {
			a = DefaultAssignee
		}
		if a != rec.assignee {
			rec.assignee = a
			set("assignee", a)
		}
	}
	if in.Labels != nil && !slices.Equal(*in.Labels, rec.labels) {
		rec.labels = append([]string{}, *in.Labels...)
		set("labels", rec.labels)
	}
	if newHolder != holder {
		if newHolder != "" {
			set("claimed_by", newHolder)
		} else {
			set("released_by", actor)
		}
	}
	if rec.progress == MaxProgress && to != StatusDone {
		warnings = append(warnings, fmt.Sprintf("progress is 100 but the status is %s; move the task to done (through review) when the work is finished", to))
	}

	out := UpdateOutput{
		TaskID:    rec.id(),
		Status:    to,
		Progress:  rec.progress,
		UpdatedAt: formatMillis(rec.updatedMs),
		UpdatedBy: rec.updatedBy,
		Warnings:  warnings,
		ClaimedBy: newHolder,
	}
	if len(fields) == 0 {
		return out, nil, nil
	}
	rec.updatedMs = now.UnixMilli()
	rec.updatedBy = actor
	out.UpdatedAt = formatMillis(rec.updatedMs)
	out.UpdatedBy = actor
	if to != from {
		out.PreviousStatus = from
	}
	unblocked, err := putRecord(tx, &rec, prev)
	if err != nil {
		return UpdateOutput{}, nil, err
	}
	if depsChanged {
		if err := setDeps(tx, num, deps, depCodes); err != nil {
			return UpdateOutput{}, nil, err
		}
	}
	if newHolder != holder {
		if err := setClaim(tx, num, newHolder); err != nil {
			return UpdateOutput{}, nil, err
		}
	}
	if s.cfg.OnChange != nil {
		data := make(map[string]any, len(changes)+1)
		for k, v := range changes {
			data[k] = v
		}
		if to != from {
			data["previous_status"] = from
		}
		if forced != nil {
			data["forced_claim"] = forced
		}
		if err := s.cfg.OnChange(tx, Change{TaskID: rec.id(), Num: rec.num, Kind: ChangeUpdated, Actor: actor, At: out.UpdatedAt, Data: data, TraceID: traceID}); err != nil {
			return UpdateOutput{}, nil, err
		}
	}
	// Claim fields are reported by task.claimed / task.released, not as
	// changed fields of task.updated.
	changed := slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return f == "claimed_by" || f == "released_by" })
	var events []pending
	if len(changed) > 0 {
		event := map[string]any{
			"task_id":        rec.id(),
			"project":        rec.project,
			"status":         to,
			"changed_fields": changed,
			"updated_by":     actor,
		}
		if to != from {
			event["previous_status"] = from
		}
		events = append(events, pending{EventUpdated, event})
	}
	switch {
	case newHolder != "" && newHolder != holder:
		claimed := map[string]any{"task_id": rec.id(), "project": rec.project, "claimed_by": newHolder}
		if forced != nil {
			claimed["forced_claim"] = forced
		}
		events = append(events, pending{EventClaimed, claimed})
	case newHolder == "" && holder != "":
		events = append(events, pending{EventReleased, map[string]any{"task_id": rec.id(), "project": rec.project, "holder": holder, "released_by": actor, "status": to}})
	}
	for _, u := range unblocked {
		events = append(events, pending{EventUnblocked, map[string]any{"task_id": FormatTaskID(u), "project": rec.project, "finished_dependency": rec.id()}})
	}
	for _, e := range events {
		if err := s.record(tx, e.typ, e.data, now); err != nil {
			return UpdateOutput{}, nil, err
		}
	}
	return out, events, nil
}
