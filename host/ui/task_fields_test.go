package ui

import (
	"encoding/json"
	"testing"
)

// The fields come in words, in a fixed order, whatever order the tool's
// keys arrive in; keys the page does not know close the list, in words.
func TestTaskFieldsOrderAndNames(t *testing.T) {
	var task map[string]any
	if err := json.Unmarshal([]byte(`{"updated_by":"bob","zeta_score":3,"labels":["parser","ui"],"estimate_hours":2,
		"created_at":"2026-11-20T10:00:00Z","created_by":"alice","updated_at":"2026-11-21T11:30:00.5Z","project":"board",
		"progress":40,"priority":"high","assignee":"agent-a","status":"blocked","blocked_reason":"waits on the lexer",
		"task_id":"T-3","title":"Parse","description":"**x**","depends_on":["T-1"],"dependents":["T-4"],"parent_id":"T-1",
		"claimed_by":"","thought_trail":["Θ-1"]}`), &task); err != nil {
		t.Fatal(err)
	}
	head, tail := taskFields(task)
	var got []string
	for _, f := range append(head, tail...) {
		got = append(got, f.Name)
	}
	want := []string{"Status", "Blocked because", "Priority", "Assignee", "Progress", "Labels", "Project", "Parent task", "Estimate", "Created", "Updated", "Zeta score"}
	if len(got) != len(want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fields %q, want %q", got, want)
		}
	}
	if len(head) != 6 {
		t.Errorf("%d fields above the description, want 6 (status to labels)", len(head))
	}
	for _, f := range tail {
		if f.Key == "created_at" && f.By != "alice" || f.Key == "updated_at" && f.By != "bob" {
			t.Errorf("%s by %q", f.Key, f.By)
		}
	}
	if w := when("2026-11-21T11:30:00.5Z"); w != "2026-11-21 11:30 UTC" {
		t.Errorf("when: %q", w)
	}
	if w := words("estimate_hours"); w != "Estimate hours" {
		t.Errorf("words: %q", w)
	}
}
