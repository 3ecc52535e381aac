package importer

import (
	"strings"
	"testing"
)

// The JSON Lines and task-master readers keep a task's id as its source
// spells it and, where the format has them, its times there
// (docs/decisions.md D41); backlog_test.go checks Backlog.md's.
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
}
