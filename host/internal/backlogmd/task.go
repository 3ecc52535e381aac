package backlogmd

import "encoding/json"

// Task is one line of the core area's task_export, the fields a task file
// shows. Source, SourceCreated and SourceUpdated are the task's id and
// times in the tool it was imported from, empty when task_export does not
// show them.
type Task struct {
	TaskID        string   `json:"task_id"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	ParentID      string   `json:"parent_id"`
	Status        string   `json:"status"`
	Priority      string   `json:"priority"`
	Progress      float64  `json:"progress"`
	Assignee      string   `json:"assignee"`
	Labels        []string `json:"labels"`
	EstimateHours *float64 `json:"estimate_hours"`
	BlockedReason string   `json:"blocked_reason"`
	DependsOn     []string `json:"depends_on"`
	Source        string   `json:"source"`
	SourceCreated string   `json:"source_created"`
	SourceUpdated string   `json:"source_updated"`
}

// UnmarshalJSON reads a task_export line, whose source is task_get's
// object {"id", "format", "created_at", "updated_at"} (docs/decisions.md
// D41), into Source, SourceCreated and SourceUpdated.
func (t *Task) UnmarshalJSON(b []byte) error {
	type fields Task
	var v struct {
		fields
		Origin *struct {
			ID        string `json:"id"`
			CreatedAt string `json:"created_at"`
			UpdatedAt string `json:"updated_at"`
		} `json:"source"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Task(v.fields)
	if v.Origin != nil {
		t.Source, t.SourceCreated, t.SourceUpdated = v.Origin.ID, v.Origin.CreatedAt, v.Origin.UpdatedAt
	}
	return nil
}
