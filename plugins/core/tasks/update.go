package tasks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	bolt "go.etcd.io/bbolt"
)

// UpdateInput is the input of task_update. Every field but task_id is
// optional; Labels is a pointer so that an explicit [] (remove all labels)
// differs from an absent field.
type UpdateInput struct {
	TaskID        string    `json:"task_id"`
	Status        *string   `json:"status,omitempty"`
	Progress      *float64  `json:"progress,omitempty"`
	Description   *string   `json:"description,omitempty"`
	Priority      *string   `json:"priority,omitempty"`
	Assignee      *string   `json:"assignee,omitempty"`
	Labels        *[]string `json:"labels,omitempty"`
	BlockedReason *string   `json:"blocked_reason,omitempty"`
}

// UpdateOutput is the output of task_update. PreviousStatus is set only when
// the status moved; Warnings only when there is something to say.
type UpdateOutput struct {
	TaskID         string   `json:"task_id"`
	Status         string   `json:"status"`
	Progress       float64  `json:"progress"`
	UpdatedAt      string   `json:"updated_at"`
	UpdatedBy      string   `json:"updated_by"`
	PreviousStatus string   `json:"previous_status,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
}

func (in *UpdateInput) validate() (uint64, error) {
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

// Update runs task_update in one transaction. Setting the current status
// again is a no-op without previous_status (D8); when nothing changes at all
// nothing is written and no event is published.
func (s *Service) Update(actor string, in UpdateInput) (UpdateOutput, error) {
	num, err := in.validate()
	if err != nil {
		return UpdateOutput{}, err
	}
	actor = actorOrUnknown(actor)
	now := s.now()
	var (
		out     UpdateOutput
		event   map[string]any
		changed bool
	)
	err = s.st.Update(func(tx *bolt.Tx) error {
		var err error
		out, event, changed, err = s.updateTx(tx, actor, &in, num, now)
		return err
	})
	if err != nil {
		return UpdateOutput{}, internal(err)
	}
	if changed {
		s.publish(EventUpdated, event)
	}
	return out, nil
}

func (s *Service) updateTx(tx *bolt.Tx, actor string, in *UpdateInput, num uint64, now time.Time) (UpdateOutput, map[string]any, bool, error) {
	prev, ok, err := loadRecord(tx, num)
	if err != nil {
		return UpdateOutput{}, nil, false, err
	}
	if !ok {
		return UpdateOutput{}, nil, false, taskNotFound("task_id", in.TaskID)
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
	if to != from && !CanTransition(from, to) {
		return UpdateOutput{}, nil, false, invalidTransition(from, to)
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
			return UpdateOutput{}, nil, false, errs.Invalid("blocked_reason", "required", "a blocked task needs a non-empty blocked_reason saying what blocks it")
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
	if in.Progress != nil && *in.Progress != rec.progress {
		rec.progress = *in.Progress
		set("progress", rec.progress)
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
	}
	if len(fields) == 0 {
		return out, nil, false, nil
	}
	rec.updatedMs = now.UnixMilli()
	rec.updatedBy = actor
	out.UpdatedAt = formatMillis(rec.updatedMs)
	out.UpdatedBy = actor
	if to != from {
		out.PreviousStatus = from
	}
	if err := putRecord(tx, &rec, prev); err != nil {
		return UpdateOutput{}, nil, false, err
	}
	if s.cfg.OnChange != nil {
		data := make(map[string]any, len(changes)+1)
		for k, v := range changes {
			data[k] = v
		}
		if to != from {
			data["previous_status"] = from
		}
		if err := s.cfg.OnChange(tx, Change{TaskID: rec.id(), Num: rec.num, Kind: ChangeUpdated, Actor: actor, At: out.UpdatedAt, Data: data}); err != nil {
			return UpdateOutput{}, nil, false, err
		}
	}
	event := map[string]any{
		"task_id":        rec.id(),
		"project":        rec.project,
		"status":         to,
		"changed_fields": fields,
		"updated_by":     actor,
	}
	if to != from {
		event["previous_status"] = from
	}
	return out, event, true, nil
}
