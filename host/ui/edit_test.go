package ui

import (
	"reflect"
	"testing"
)

func TestCreateArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		form        taskForm
		want        map[string]any
		field, rule string
	}{
		{"title only", taskForm{Title: "  Ship it "}, map[string]any{"title": "Ship it"}, "", ""},
		{"every field", taskForm{Title: "a", Description: "d", Priority: "high", Labels: "ui, forms,ui,, ", DependsOn: "t-1, T-2 T-2", Project: "shop"},
			map[string]any{"title": "a", "description": "d", "priority": "high", "labels": []string{"ui", "forms"}, "depends_on": []string{"T-1", "T-2"}, "project": "shop"}, "", ""},
		{"no title", taskForm{Title: " "}, nil, "title", "required"},
		{"a word among the dependencies", taskForm{Title: "a", DependsOn: "T-1, later"}, nil, "depends_on", "pattern"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, e := c.form.createArgs()
			if c.field != "" {
				if e == nil || e.Details["field"] != c.field || e.Details["constraint"] != c.rule {
					t.Fatalf("error %v, want field %s rule %s", e, c.field, c.rule)
				}
				return
			}
			if e != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("args %v (%v), want %v", got, e, c.want)
			}
		})
	}
}

func TestUpdateArgsSendOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	cur := editedTask{Description: "old", Priority: "normal", Labels: []string{"a", "b"}, DependsOn: []string{"T-1"}, Status: "todo"}
	same := taskForm{Description: "old\n", Priority: "normal", Labels: "a, b", DependsOn: "T-1", Status: "todo"}
	for _, c := range []struct {
		name  string
		form  func(f taskForm) taskForm
		want  map[string]any
		field string
	}{
		{"nothing changed", func(f taskForm) taskForm { return f }, nil, ""},
		{"priority", func(f taskForm) taskForm { f.Priority = "high"; return f }, map[string]any{"task_id": "T-9", "priority": "high"}, ""},
		{"labels cleared", func(f taskForm) taskForm { f.Labels = ""; return f }, map[string]any{"task_id": "T-9", "labels": []string{}}, ""},
		{"dependencies replaced", func(f taskForm) taskForm { f.DependsOn = "T-2,T-1"; return f }, map[string]any{"task_id": "T-9", "depends_on": []string{"T-2", "T-1"}}, ""},
		{"a move", func(f taskForm) taskForm { f.Status = "in_progress"; return f }, map[string]any{"task_id": "T-9", "status": "in_progress"}, ""},
		{"a block carries its reason", func(f taskForm) taskForm { f.Status = "blocked"; f.BlockedReason = " waits on legal "; return f },
			map[string]any{"task_id": "T-9", "status": "blocked", "blocked_reason": "waits on legal"}, ""},
		{"description", func(f taskForm) taskForm { f.Description = "new"; return f }, map[string]any{"task_id": "T-9", "description": "new"}, ""},
		{"unknown status", func(f taskForm) taskForm { f.Status = "shipped"; return f }, nil, "status"},
		{"bad dependency", func(f taskForm) taskForm { f.DependsOn = "1"; return f }, nil, "depends_on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, e := c.form(same).updateArgs("T-9", cur)
			if c.field != "" {
				if e == nil || e.Details["field"] != c.field {
					t.Fatalf("error %v, want one naming %s", e, c.field)
				}
				return
			}
			if e != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("args %v (%v), want %v", got, e, c.want)
			}
		})
	}
}
