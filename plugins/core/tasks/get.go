package tasks

import (
	"github.com/cairn-mcp/cairn/internal/kv"
)

// GetInput is the input of task_get.
type GetInput struct {
	TaskID              string `json:"task_id"`
	IncludeThoughtTrail *bool  `json:"include_thought_trail,omitempty"`
	IncludeDependents   *bool  `json:"include_dependents,omitempty"`
}

// Task is the output of task_get: every task field of part 2 except
// sequence. estimate_hours, parent_id and blocked_reason appear only when
// set; thought_trail and dependents only when requested (then always as a
// list, possibly empty — hence omitzero, which keeps an empty non-nil slice).
type Task struct {
	TaskID        string   `json:"task_id"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	Project       string   `json:"project"`
	ParentID      string   `json:"parent_id,omitempty"`
	Status        string   `json:"status" jsonschema:"enum=backlog,enum=todo,enum=in_progress,enum=blocked,enum=review,enum=done,enum=cancelled"`
	Priority      string   `json:"priority" jsonschema:"enum=low,enum=normal,enum=high,enum=critical"`
	Progress      float64  `json:"progress"`
	Assignee      string   `json:"assignee"`
	Labels        []string `json:"labels"`
	EstimateHours *float64 `json:"estimate_hours,omitempty"`
	BlockedReason string   `json:"blocked_reason,omitempty"`
	CreatedAt     string   `json:"created_at"`
	UpdatedAt     string   `json:"updated_at"`
	CreatedBy     string   `json:"created_by"`
	UpdatedBy     string   `json:"updated_by"`
	ThoughtTrail  []string `json:"thought_trail,omitzero"`
	Dependents    []string `json:"dependents,omitzero"`
	// DependsOn lists the tasks this one waits on (D27), in number order;
	// task_get always shows it.
	DependsOn []string `json:"depends_on,omitzero"`
	// DependedOnBy lists the tasks whose depends_on names this one, with
	// include_dependents (dependents keeps the seed's meaning: sub-tasks).
	DependedOnBy []string `json:"depended_on_by,omitzero"`
	// ClaimedBy is the holder of the task's claim, when claimed.
	ClaimedBy string `json:"claimed_by,omitempty"`
	// Source is where an imported task came from (docs/decisions.md
	// D41); absent for a task made here.
	Source *Origin `json:"source,omitempty"`
	// Approval is the task's approval request or decision, in a project
	// that requires one (docs/decisions.md D45).
	Approval *Approval `json:"approval,omitempty"`
}

// shownProgress is a task's progress as the views show it: a done task is
// finished, 100, whatever was stored before a move to done set it
// (docs/decisions.md D8).
func shownProgress(status uint8, progress float64) float64 {
	if status == codeDone {
		return MaxProgress
	}
	return progress
}

func (r *record) view() Task {
	t := Task{
		TaskID:        r.id(),
		Title:         r.title,
		Description:   r.description,
		Project:       r.project,
		Status:        statusName(r.status),
		Priority:      priorityName(r.priority),
		Progress:      shownProgress(r.status, r.progress),
		Assignee:      r.assignee,
		Labels:        append([]string{}, r.labels...),
		BlockedReason: r.blockedReason,
		CreatedAt:     formatMillis(r.createdMs),
		UpdatedAt:     formatMillis(r.updatedMs),
		CreatedBy:     r.createdBy,
		UpdatedBy:     r.updatedBy,
	}
	if r.parent != 0 {
		t.ParentID = FormatTaskID(r.parent)
	}
	if r.hasEstimate {
		e := r.estimate
		t.EstimateHours = &e
	}
	if r.origin != (Origin{}) {
		o := r.origin
		t.Source = &o
	}
	return t
}

// asMap renders the task fields as a JSON-able map for the OnChange hook,
// with the same presence rules as the JSON of Task.
func (t Task) asMap() map[string]any {
	m := map[string]any{
		"task_id":     t.TaskID,
		"title":       t.Title,
		"description": t.Description,
		"project":     t.Project,
		"status":      t.Status,
		"priority":    t.Priority,
		"progress":    t.Progress,
		"assignee":    t.Assignee,
		"labels":      t.Labels,
		"created_at":  t.CreatedAt,
		"updated_at":  t.UpdatedAt,
		"created_by":  t.CreatedBy,
		"updated_by":  t.UpdatedBy,
	}
	if t.ParentID != "" {
		m["parent_id"] = t.ParentID
	}
	if t.EstimateHours != nil {
		m["estimate_hours"] = *t.EstimateHours
	}
	if t.BlockedReason != "" {
		m["blocked_reason"] = t.BlockedReason
	}
	if t.Source != nil {
		src := map[string]any{"id": t.Source.ID, "format": t.Source.Format}
		if t.Source.CreatedAt != "" {
			src["created_at"] = t.Source.CreatedAt
		}
		if t.Source.UpdatedAt != "" {
			src["updated_at"] = t.Source.UpdatedAt
		}
		m["source"] = src
	}
	return m
}

// Get runs task_get.
func (s *Service) Get(in GetInput) (Task, error) {
	num, err := checkTaskID("task_id", in.TaskID)
	if err != nil {
		return Task{}, err
	}
	var t Task
	err = s.st.View(func(tx kv.Tx) error {
		rec, ok, err := loadRecord(tx, num)
		if err != nil {
			return err
		}
		if !ok {
			return taskNotFound("task_id", in.TaskID)
		}
		t = rec.view()
		t.DependsOn = taskIDs(depsOf(tx, num))
		t.ClaimedBy = claimHolder(tx, num)
		if t.Approval, err = approvalOf(tx, rec); err != nil {
			return err
		}
		if in.IncludeDependents != nil && *in.IncludeDependents {
			t.Dependents = childIDs(tx, num)
			t.DependedOnBy = taskIDs(dependentsOf(tx, num))
		}
		if in.IncludeThoughtTrail != nil && *in.IncludeThoughtTrail {
			t.ThoughtTrail = []string{}
			if s.cfg.ThoughtTrail != nil {
				trail, err := s.cfg.ThoughtTrail(tx, t.TaskID)
				if err != nil {
					return err
				}
				if trail != nil {
					t.ThoughtTrail = trail
				}
			}
		}
		return nil
	})
	if err != nil {
		return Task{}, internal(err)
	}
	return t, nil
}
