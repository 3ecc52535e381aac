package importer

import (
	"strings"
	"testing"
)

// A board as people have it (docs/decisions.md D41): config.yml's
// task_prefix names its ids, and tasks/, drafts/, completed/ and
// archive/tasks/ each hold tasks whose folder says where they stand.
func TestReadBacklogBoardAsPeopleHaveIt(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"config.yml": "project_name: \"Demo\"\ndefault_status: \"To Do\"\nstatuses: [\"To Do\", \"In Progress\", \"Done\"]\ntask_prefix: \"back\"\n",
		"tasks/back-12 - Ship-it.md": "---\nid: BACK-12\ntitle: Ship it\nstatus: In Progress\nassignee: @ann\nreporter: @bob\n" +
			"created_date: '2025-06-03 14:30'\nupdated_date: 2025-06-05\nlabels: [cli]\ndependencies: [back-3, task-1, \"7\"]\n---\n\n## Description\n\nShip.\n",
		"tasks/back-12.1 - Sub.md":       "---\nid: BACK-12.1\ntitle: Sub\nstatus: To Do\nassignee: [@ann, carl]\nparent_task_id: BACK-12\n---\n",
		"tasks/back-217.02 - Padded.md":  "---\nid: BACK-217.02\ntitle: Padded\nstatus: To Do\nparent_task_id: back-217\n---\n",
		"tasks/readme.md":                "# not a task\n",
		"drafts/draft-1 - Idea.md":       "---\nid: DRAFT-1\ntitle: Idea\nstatus: To Do\n---\n",
		"completed/back-3 - Done.md":     "---\nid: BACK-3\ntitle: Done\nstatus: Done\n---\n",
		"completed/back-1 - First.md":    "---\nid: BACK-1\ntitle: First\nstatus: In Progress\n---\n",
		"completed/back-7 - Seventh.md":  "---\nid: BACK-7\ntitle: Seventh\nstatus: Done\n---\n",
		"archive/tasks/back-217 - Ar.md": "---\nid: BACK-217\ntitle: Archived\nstatus: To Do\n---\n",
		"archive/drafts/draft-9 - x.md":  "---\nid: DRAFT-9\ntitle: gone\n---\n",
		"decisions/readme.md":            "# Decisions\n",
	})
	ts, err := ReadBacklog(dir, "backlog")
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Task{}
	var keys []string
	for _, x := range ts {
		byKey[x.Key] = x
		keys = append(keys, x.Key)
	}
	if got := strings.Join(keys, " "); got != "back-1 back-3 back-7 back-12 back-12.1 back-217 back-217.2 draft-1" {
		t.Fatalf("keys in id order: %s", got)
	}
	for _, c := range []struct {
		key, status, source, parent string
	}{
		{"back-12", "in_progress", "BACK-12", ""},
		{"back-12.1", "todo", "BACK-12.1", "back-12"},
		{"back-217.2", "todo", "BACK-217.02", "back-217"},
		{"draft-1", "backlog", "DRAFT-1", ""},
		{"back-3", "done", "BACK-3", ""},
		// The folder wins over the file's status.
		{"back-1", "done", "BACK-1", ""},
		{"back-217", "cancelled", "BACK-217", ""},
	} {
		x := byKey[c.key]
		if x.Status != c.status || x.Source != c.source || x.Parent != c.parent {
			t.Errorf("%s: status %q source %q parent %q, want %q %q %q", c.key, x.Status, x.Source, x.Parent, c.status, c.source, c.parent)
		}
	}
	twelve := byKey["back-12"]
	if got := strings.Join(twelve.DependsOn, " "); got != "back-3 back-1 back-7" {
		t.Errorf("dependencies %q: task- and bare numbers are the board's prefix", got)
	}
	if *twelve.Assignee != "ann" || *byKey["back-12.1"].Assignee != "ann" || *twelve.Description != "Ship." {
		t.Errorf("back-12 %+v", twelve)
	}
	if twelve.SourceCreated != "2025-06-03T14:30:00Z" || twelve.SourceUpdated != "2025-06-05T00:00:00Z" {
		t.Errorf("times %q %q", twelve.SourceCreated, twelve.SourceUpdated)
	}
	if byKey["back-3"].SourceCreated != "" {
		t.Errorf("a task without dates has none")
	}
}

// Each folder alone, and the tasks/ folder given by itself.
func TestReadBacklogFolders(t *testing.T) {
	t.Parallel()
	task := "---\nid: task-4\ntitle: Four\nstatus: Blocked\n---\n"
	for _, c := range []struct{ file, status, reason string }{
		{"tasks/task-4 - Four.md", "blocked", BacklogBlockedReason},
		{"drafts/task-4 - Four.md", "backlog", ""},
		{"completed/task-4 - Four.md", "done", ""},
		{"archive/tasks/task-4 - Four.md", "cancelled", ""},
		{"task-4 - Four.md", "blocked", BacklogBlockedReason},
		{"backlog/completed/task-4 - Four.md", "done", ""},
	} {
		t.Run(c.file, func(t *testing.T) {
			ts, err := ReadBacklog(writeFiles(t, map[string]string{c.file: task}), "b")
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) != 1 || ts[0].Status != c.status || ts[0].Key != "task-4" {
				t.Fatalf("read %+v", ts)
			}
			if got := ts[0].BlockedReason; (got == nil) != (c.reason == "") || got != nil && *got != c.reason {
				t.Fatalf("blocked reason %v", got)
			}
			if want := "b/" + c.file; ts[0].Where.File != want {
				t.Fatalf("where %q, want %q", ts[0].Where.File, want)
			}
		})
	}
}

// What the reader keeps for a round trip of cairn's own export: the
// source_id over the id, progress, estimate, a blocked reason and a
// description exactly as written, spaces included.
func TestReadBacklogCairnFields(t *testing.T) {
	t.Parallel()
	desc := "  first line\n\n- item\n  "
	data := "---\nblocked_reason: waits on ops\ncreated_date: \"2024-01-02T03:04:05.000Z\"\nestimate_hours: 2.5\nid: T-5\nprogress: 40\n" +
		"source_id: back-222.1\nstatus: Blocked\ntitle: 'A: title'\n---\n\n" + backlogDescHead + desc + backlogDescTail
	x, err := parseBacklog("t-5 - A-title.md", []byte(data), backlogIDs{prefix: "t"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if x.Key != "t-5" || x.Source != "back-222.1" || x.Title != "A: title" || *x.Description != desc {
		t.Fatalf("read %+v", x)
	}
	if *x.BlockedReason != "waits on ops" || *x.Progress != 40 || *x.EstimateHours != 2.5 || x.SourceCreated != "2024-01-02T03:04:05.000Z" {
		t.Fatalf("read %+v", x)
	}
}

// Malformed files and config are refused naming the file, the line and
// the field; unknown dependencies are not the reader's to refuse.
func TestReadBacklogRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		files map[string]string
		file  string
		line  int
		field string
	}{
		{"prefix not letters", map[string]string{"config.yml": "task_prefix: \"b-1\"\n", "tasks/b-1 - a.md": "---\nid: b-1\ntitle: a\n---\n"}, "b/config.yml", 1, "task_prefix"},
		{"bad date", map[string]string{"tasks/task-1 - a.md": "---\nid: task-1\ntitle: a\ncreated_date: soon\n---\n"}, "b/tasks/task-1 - a.md", 4, "created_date"},
		{"bad progress", map[string]string{"completed/task-1 - a.md": "---\nid: task-1\ntitle: a\nprogress: lots\n---\n"}, "b/completed/task-1 - a.md", 4, "progress"},
		{"no title in drafts", map[string]string{"drafts/draft-1 - a.md": "---\nid: draft-1\n---\n"}, "b/drafts/draft-1 - a.md", 1, "title"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadBacklog(writeFiles(t, c.files), "b")
			wantRefusal(t, err, c.file, c.line, c.field)
		})
	}
	ts, err := ReadBacklog(writeFiles(t, map[string]string{"tasks/task-2 - a.md": "---\nid: task-2\ntitle: a\ndependencies: [task-99]\nparent_task_id: task-98\n---\n"}), "b")
	if err != nil || ts[0].DependsOn[0] != "task-99" || ts[0].Parent != "task-98" {
		t.Fatalf("unknown ids pass the reader: %+v %v", ts, err)
	}
}
