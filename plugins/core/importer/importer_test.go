package importer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// wantRefusal checks that err is a 400 naming file, line and field.
func wantRefusal(t *testing.T, err error, file string, line int, field string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Status != 400 {
		t.Fatalf("want a 400 typed error, got %v", err)
	}
	if e.Details["file"] != file || e.Details["field"] != field {
		t.Fatalf("want file %s field %q, got %v (%s)", file, field, e.Details, e.Message)
	}
	if got, _ := e.Details["line"].(int); got != line {
		t.Fatalf("want line %d, got %v (%s)", line, e.Details["line"], e.Message)
	}
}

func TestReadJSONL(t *testing.T) {
	t.Parallel()
	good := `{"task_id":"T-1","title":"a","status":"done","priority":"high","labels":["x"],"created_at":"2026-01-01T00:00:00.000Z","sequence":1}

{"task_id":"T-2","title":"b","parent_id":"T-1","depends_on":["T-1"],"progress":40,"blocked_reason":"r","status":"blocked"}
`
	ts, err := ReadJSONL("t.jsonl", strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Status != "done" || *ts[0].Priority != "high" || ts[1].Parent != "T-1" || ts[1].DependsOn[0] != "T-1" || *ts[1].Progress != 40 || ts[1].Where.Line != 3 {
		t.Fatalf("read %+v", ts)
	}
	for _, c := range []struct {
		name, in string
		line     int
		field    string
	}{
		{"no task_id", `{"title":"a"}`, 1, "task_id"},
		{"no title", "\n" + `{"task_id":"T-1"}`, 2, "title"},
		{"unknown field", `{"task_id":"T-1","title":"a","titel":"b"}`, 1, "titel"},
		{"wrong type", `{"task_id":"T-1","title":"a"}` + "\n" + `{"task_id":"T-2","title":"b","progress":"half"}`, 2, "progress"},
		{"labels not a list", `{"task_id":"T-1","title":"a","labels":"x"}`, 1, "labels"},
		{"not JSON", `{"task_id":`, 1, ""},
		{"two values", `{"task_id":"T-1","title":"a"} {}`, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := ReadJSONL("t.jsonl", strings.NewReader(c.in))
			if ts != nil {
				t.Fatalf("tasks returned beside an error: %v", ts)
			}
			wantRefusal(t, err, "t.jsonl", c.line, c.field)
		})
	}
}

func TestReadTaskMaster(t *testing.T) {
	t.Parallel()
	plain := `{"tasks": [
  {"id": 1, "title": "Set up", "description": "d", "details": "more", "testStrategy": "run it",
   "status": "done", "priority": "medium", "dependencies": [],
   "subtasks": [
     {"id": 1, "title": "s1", "status": "pending", "dependencies": []},
     {"id": 2, "title": "s2", "status": "in-progress", "dependencies": [1]}
   ]},
  {"id": 2, "title": "Next", "status": "deferred", "priority": "high", "dependencies": [1, "1.2"]}
]}`
	ts, err := ReadTaskMaster("tasks.json", []byte(plain), Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, x := range ts {
		keys = append(keys, x.Key)
	}
	if strings.Join(keys, ",") != "1,1.1,1.2,2" {
		t.Fatalf("keys %v", keys)
	}
	if ts[0].Status != "done" || *ts[0].Priority != "normal" || *ts[0].Description != "d\n\n## Details\n\nmore\n\n## Test strategy\n\nrun it" {
		t.Fatalf("task 1: %+v", ts[0])
	}
	if ts[2].Parent != "1" || ts[2].DependsOn[0] != "1.1" || ts[2].Status != "in_progress" || ts[2].Where.Line != 6 {
		t.Fatalf("subtask 1.2: %+v", ts[2])
	}
	if ts[3].Status != "backlog" || strings.Join(ts[3].DependsOn, ",") != "1,1.2" {
		t.Fatalf("task 2: %+v", ts[3])
	}
	tagged := `{"master": {"tasks": [{"id": 1, "title": "a"}]}, "feature": {"tasks": [{"id": 7, "title": "b"}]}}`
	if ts, err := ReadTaskMaster("tasks.json", []byte(tagged), Options{Tags: []string{"master"}, TagProjects: true}); err != nil || len(ts) != 1 || ts[0].Key != "1" || ts[0].Status != "todo" || ts[0].Project != "" {
		t.Fatalf("master tag: %v %v", ts, err)
	}
	if ts, err := ReadTaskMaster("tasks.json", []byte(tagged), Options{Tags: []string{"feature"}, TagProjects: true}); err != nil || len(ts) != 1 || ts[0].Key != "feature:7" || ts[0].Project != "feature" {
		t.Fatalf("feature tag: %v %v", ts, err)
	}
	// Tags past the hundred a refusal lists are still found.
	var many strings.Builder
	many.WriteString("{")
	for i := range 150 {
		fmt.Fprintf(&many, `"t%03d": {"tasks": [{"id": %d, "title": "a"}]},`, i, i+1)
	}
	many.WriteString(`"z": {}}`)
	if ts, err := ReadTaskMaster("tasks.json", []byte(many.String()), Options{Tags: []string{"t149"}}); err != nil || len(ts) != 1 || ts[0].Key != "t149:150" {
		t.Fatalf("tag t149 of 151: %v %v", ts, err)
	}
	if _, err := ReadTaskMaster("tasks.json", []byte(many.String()), Options{Tags: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "and 51 more") {
		t.Fatalf("an unknown tag among 151: %v", err)
	}
	for _, c := range []struct {
		name, in string
		line     int
		field    string
	}{
		{"bad status", "{\"tasks\": [\n{\"id\": 1, \"title\": \"a\"},\n{\"id\": 2, \"title\": \"b\", \"status\": \"finished\"}]}", 3, "status"},
		{"status on a later line", "{\"tasks\": [\n{\"id\": 1,\n \"title\": \"a\",\n \"status\": \"x\"}]}", 4, "status"},
		{"bad priority", "{\"tasks\": [{\"id\": 1, \"title\": \"a\", \"priority\": \"urgent\"}]}", 1, "priority"},
		{"no title", "{\"tasks\": [\n\n{\"id\": 1}]}", 3, "title"},
		{"bad id", "{\"tasks\": [{\"id\": \"x\", \"title\": \"a\"}]}", 1, "id"},
		{"bad dependency", "{\"tasks\": [{\"id\": 1, \"title\": \"a\", \"dependencies\": [true]}]}", 1, "dependencies[0]"},
		{"no task list", `{"feature": {"metadata": {}}, "other": 3}`, 1, "tasks"},
		{"not JSON", `{"tasks": [`, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := ReadTaskMaster("tasks.json", []byte(c.in), Options{})
			if ts != nil {
				t.Fatalf("tasks returned beside an error: %v", ts)
			}
			wantRefusal(t, err, "tasks.json", c.line, c.field)
		})
	}
}

const backlogTask = `---
id: task-2
title: Second
status: In Progress
assignee:
  - '@ann'
labels: [api, db]
dependencies:
  - task-1
priority: high
created_date: '2025-06-03 10:00'
---

## Description

<!-- SECTION:DESCRIPTION:BEGIN -->
Do the thing.
<!-- SECTION:DESCRIPTION:END -->

## Acceptance Criteria
<!-- AC:BEGIN -->
- [ ] #1 it works
<!-- AC:END -->
`

func TestReadBacklog(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"tasks/task-10 - Tenth.md": "---\nid: task-10\ntitle: Tenth\nstatus: To Do\nparent_task_id: task-2\n---\n",
		"tasks/task-2 - Second.md": backlogTask,
		"tasks/task-1 - First.md":  "---\nid: TASK-1\ntitle: First\nstatus: Done\n---\nbody\n",
		"tasks/readme.txt":         "not a task",
		"drafts/readme.md":         "# Drafts\n",
	})
	ts, err := ReadBacklog(dir, "backlog")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].Key != "task-1" || ts[1].Key != "task-2" || ts[2].Key != "task-10" {
		t.Fatalf("read %+v", ts)
	}
	two := ts[1]
	if two.Status != "in_progress" || *two.Assignee != "ann" || strings.Join(two.Labels, ",") != "api,db" || two.DependsOn[0] != "task-1" || *two.Priority != "high" {
		t.Fatalf("task-2: %+v", two)
	}
	if *two.Description != "Do the thing.\n\n## Acceptance Criteria\n- [ ] #1 it works" {
		t.Fatalf("task-2 description %q", *two.Description)
	}
	if ts[2].Parent != "task-2" || ts[0].Status != "done" || *ts[0].Description != "body" {
		t.Fatalf("read %+v", ts)
	}
	for _, c := range []struct {
		name, in string
		line     int
		field    string
	}{
		{"no frontmatter", "# title\n", 1, ""},
		{"unclosed", "---\nid: task-1\n", 1, ""},
		{"no id", "---\ntitle: a\n---\n", 1, "id"},
		{"bad id", "---\nid: story-one\ntitle: a\n---\n", 2, "id"},
		{"bad status", "---\nid: task-1\ntitle: a\nstatus: Someday\n---\n", 4, "status"},
		{"bad dependency", "---\nid: task-1\ntitle: a\ndependencies:\n  - nope\n---\n", 5, "dependencies"},
		{"title a list", "---\nid: task-1\ntitle: [a, b]\n---\n", 3, "title"},
		{"labels a map", "---\nid: task-1\ntitle: a\nlabels: {a: b}\n---\n", 4, "labels"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBacklogFile("backlog/tasks/task-1 - a.md", []byte(c.in))
			wantRefusal(t, err, "backlog/tasks/task-1 - a.md", c.line, c.field)
		})
	}
	bad := writeFiles(t, map[string]string{
		"tasks/task-1 - a.md": "---\nid: task-1\ntitle: a\n---\n",
		"tasks/task-2 - b.md": "---\nid: task-2\n---\n",
	})
	if ts, err := ReadBacklog(bad, "board"); ts != nil || err == nil {
		t.Fatalf("one bad file: %v %v", ts, err)
	} else {
		wantRefusal(t, err, "board/tasks/task-2 - b.md", 1, "title")
	}
}

// writeFiles writes files (path in the folder → content) into a new
// folder and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
