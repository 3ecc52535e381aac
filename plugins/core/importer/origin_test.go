package importer

import (
	"strings"
	"testing"
)

// Each reader keeps a task's id as its source spells it and, where the
// format has them, its times there (docs/decisions.md D41).
func TestReadersKeepTheSource(t *testing.T) {
	t.Parallel()
	js, err := ReadJSONL("t.jsonl", strings.NewReader(`{"task_id":"T-12","title":"a","created_at":"2026-01-02T03:04:05.000Z","source":{"id":"42.3","format":"taskmaster"}}`+"\n"))
	if err != nil || len(js) != 1 || js[0].Source != "T-12" || js[0].SourceCreated != "2026-01-02T03:04:05.000Z" || js[0].SourceUpdated != "" {
		t.Fatalf("jsonl: %+v %v", js, err)
	}
	tm, err := ReadTaskMaster("tasks.json", []byte(`{"tasks":[{"id":42,"title":"a","subtasks":[{"id":3,"title":"b"}]}]}`), Options{})
	if err != nil || len(tm) != 2 || tm[0].Source != "42" || tm[1].Source != "42.3" {
		t.Fatalf("taskmaster: %+v %v", tm, err)
	}
	bl, err := ParseBacklogFile("backlog/tasks/task-222.1 - a.md", []byte("---\nid: TASK-222.1\ntitle: a\ncreated_date: '2025-06-08 14:29'\nupdated_date: 2025-07-01\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if bl.Source != "TASK-222.1" || bl.SourceCreated != "2025-06-08T14:29:00Z" || bl.SourceUpdated != "2025-07-01T00:00:00Z" {
		t.Fatalf("backlog: source %q, created %q, updated %q", bl.Source, bl.SourceCreated, bl.SourceUpdated)
	}
	if got := backlogTime("someday"); got != "" {
		t.Fatalf("an unreadable date became %q", got)
	}
}
