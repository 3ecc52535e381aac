package backlogmd

import (
	"encoding/json"
	"testing"
)

// A task_export line's source object fills the task's source id and times.
func TestTaskReadsTheSourceObject(t *testing.T) {
	t.Parallel()
	var got Task
	line := `{"task_id":"T-3","title":"a","source":{"id":"42.3","format":"taskmaster","created_at":"2025-06-08T14:29:00Z"}}`
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	if got.TaskID != "T-3" || got.Title != "a" || got.Source != "42.3" || got.SourceCreated != "2025-06-08T14:29:00Z" || got.SourceUpdated != "" {
		t.Fatalf("read %+v", got)
	}
	var plain Task
	if err := json.Unmarshal([]byte(`{"task_id":"T-4","title":"b"}`), &plain); err != nil || plain.Source != "" || plain.TaskID != "T-4" {
		t.Fatalf("read %+v, %v", plain, err)
	}
}
