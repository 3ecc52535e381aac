package importer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// leniently is what a reader yields for one item: its key, the status and
// priority it got, the field its mend names or, skipped, the field it
// could not read.
type leniently struct {
	key, status, priority string
	mended, skipped       string
}

// A reader reads every item it can of a file whose items are not all
// right: an unknown status goes to the nearest cairn status (backlog when
// its name says nothing), an unknown priority to normal, each noted as a
// mend; an item it cannot read at all is yielded skipped with its place
// and field. Read, which is strict, refuses the file at the first of
// them, naming file, line and field, as before (docs/decisions.md D41).
func TestReadersMendOrSkipOneItem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, format string
		files        map[string]string
		path         string // in the folder
		want         []leniently
		// the strict refusal: file (in the folder), line, field
		file  string
		line  int
		field string
	}{{
		name: "taskmaster", format: FormatTaskMaster, path: "tasks.json",
		files: map[string]string{"tasks.json": `{"tasks": [
{"id": 1, "title": "a", "status": "in-review"},
{"id": 2, "title": "b", "priority": "urgent"},
{"id": 3, "title": 5},
{"id": 4, "title": "d", "subtasks": [{"id": 1, "title": "e", "status": "waiting"}, {"id": 2, "title": "f", "dependencies": [true]}]}
]}`},
		want: []leniently{
			{key: "1", status: "review", mended: "status"},
			{key: "2", status: "todo", priority: "normal", mended: "priority"},
			{key: "3", skipped: "title"},
			{key: "4", status: "todo"},
			{key: "4.1", status: "blocked", mended: "status"},
			{key: "4.2", skipped: "dependencies[0]"},
		},
		file: "tasks.json", line: 2, field: "status",
	}, {
		name: "beads", format: FormatBeads, path: "issues.jsonl",
		files: map[string]string{"issues.jsonl": `{"id":"bd-1","title":"a","status":"in_review"}
{"id":"bd-2","title":"b","status":"open","priority":9}
{"id":"bd-3","title":["x"],"status":"open"}

{"id":"bd-5","title":"e","status":"qux"}
{"title":"no id","status":"open"}
`},
		want: []leniently{
			{key: "bd-1", status: "review", mended: "status"},
			{key: "bd-2", status: "todo", priority: "normal", mended: "priority"},
			{key: "bd-3", skipped: "title"},
			{key: "bd-5", status: "backlog", mended: "status"},
			{key: "", skipped: "id"},
		},
		file: "issues.jsonl", line: 1, field: "status",
	}, {
		name: "jsonl", format: FormatJSONL, path: "tasks.jsonl",
		files: map[string]string{"tasks.jsonl": `{"task_id":"T-1","title":"a"}
{"task_id":"T-2","title":7}
{"task_id":"T-3","title":"c","bogus":1}
{"task_id":"T-4","title":"d"}
`},
		want: []leniently{
			{key: "T-1"},
			{key: "T-2", skipped: "title"},
			{key: "T-3", skipped: "bogus"},
			{key: "T-4"},
		},
		file: "tasks.jsonl", line: 2, field: "title",
	}, {
		name: "backlog", format: FormatBacklog, path: "backlog",
		files: map[string]string{
			"backlog/tasks/task-1 - a.md": "---\nid: task-1\ntitle: a\nstatus: Awaiting QA\n---\n",
			"backlog/tasks/task-2 - b.md": "---\nid: task-2\ntitle: b\nstatus: To Do\npriority: urgent\n---\n",
			"backlog/tasks/task-3 - c.md": "---\nid: task-3\ntitle: [c\n---\n",
			"backlog/tasks/task-4 - d.md": "---\nid: task-4\ntitle: d\nstatus: Blocked\ncreated_date: yesterday\n---\n",
			"backlog/tasks/task-5 - e.md": "---\nid: task-5\ntitle: e\nstatus: Someday\n---\n",
		},
		want: []leniently{
			{key: "task-1", status: "review", mended: "status"},
			{key: "task-2", status: "todo", priority: "normal", mended: "priority"},
			{key: "task-3", skipped: ""},
			{key: "task-4", status: "blocked", mended: "created_date"},
			{key: "task-5", status: "backlog", mended: "status"},
		},
		file: "backlog/tasks/task-1 - a.md", line: 4, field: "status",
	}, {
		name: "claude", format: FormatClaude, path: "list",
		files: map[string]string{
			"list/1.json": `{"id":"1","subject":"a","status":"in_review"}`,
			"list/2.json": `{"id":"2","subject":3,"status":"pending"}`,
			"list/3.json": `{"id":"3","subject":"c","status":"pending","blockedBy":["2"]}`,
			"list/4.json": `{"id":"4","subject":"d","status":"done-ish"}`,
		},
		want: []leniently{
			{key: "1", status: "review", mended: "status"},
			{key: "2", skipped: "subject"},
			{key: "3", status: "todo"},
			{key: "4", status: "done", mended: "status"},
		},
		file: "list/1.json", line: 0, field: "status",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := writeFiles(t, c.files)
			path := filepath.Join(dir, c.path)
			in, err := Open(path, c.format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = in.Close() }()
			var got []Task
			if err := in.Scan(func(x Task) error { got = append(got, x); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) {
				t.Fatalf("read %d items, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				x := got[i]
				if x.Key != w.key {
					t.Errorf("item %d: key %q, want %q", i, x.Key, w.key)
				}
				if w.skipped != "" || x.Skip != nil {
					e, ok := errs.As(x.Skip)
					if !ok {
						t.Errorf("item %d (%s): not skipped: %+v", i, w.key, x)
						continue
					}
					if f, _ := e.Details["field"].(string); f != w.skipped {
						t.Errorf("item %d (%s): skipped for field %q, want %q (%s)", i, w.key, f, w.skipped, e.Message)
					}
					if !strings.HasPrefix(e.Message, x.Where.File) || !strings.HasPrefix(x.Where.File, dir) {
						t.Errorf("item %d (%s): skip at %v says %q", i, w.key, x.Where, e.Message)
					}
					continue
				}
				if x.Status != w.status || str(x.Priority) != w.priority {
					t.Errorf("item %d (%s): status %q priority %q, want %q %q", i, w.key, x.Status, str(x.Priority), w.status, w.priority)
				}
				if x.Status == "blocked" && str(x.BlockedReason) == "" {
					t.Errorf("item %d (%s): blocked with no reason", i, w.key)
				}
				var mended []string
				for _, m := range x.Mended {
					mended = append(mended, m.Field)
					if m.Action == "" || m.Fix == "" || m.Rule == "" || m.Refusal == nil {
						t.Errorf("item %d (%s): mend %+v lacks a part", i, w.key, m)
					}
				}
				if strings.Join(mended, ",") != w.mended {
					t.Errorf("item %d (%s): mended %v, want %q", i, w.key, mended, w.mended)
				}
			}
			_, err = Read(path, c.format, Options{})
			wantRefusal(t, err, filepath.Join(dir, filepath.FromSlash(c.file)), c.line, c.field)
		})
	}
}

// A file that is not JSON, one line of it cut short, cannot be read at
// all: the reader refuses it, lenient or not.
func TestReadersRefuseWhatIsNotJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ format, name, text string }{
		{FormatJSONL, "tasks.jsonl", "{\"task_id\":\"T-1\",\"title\":\"a\"}\n{\"task_id\":\"T-2\",\"ti"},
		{FormatBeads, "issues.jsonl", "{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\"}\nnot json\n"},
		{FormatTaskMaster, "tasks.json", "{\"tasks\": [{\"id\": 1, \"title\": \"a\"}, {\"id\": 2,"},
	} {
		dir := writeFiles(t, map[string]string{c.name: c.text})
		in, err := Open(filepath.Join(dir, c.name), c.format, Options{})
		if err == nil { // task-master's tags are read on opening
			err = in.Scan(func(Task) error { return nil })
			_ = in.Close()
		}
		if e, ok := errs.As(err); !ok || e.Details["constraint"] != "format" {
			t.Errorf("%s: want a format refusal, got %v", c.format, err)
		}
	}
}

// NearestStatus reads a status by the words of its name.
func TestNearestStatus(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"In Review": "review", "Blocked": "blocked", "waiting-on-design": "blocked", "WIP": "in_progress",
		"Won't Do": "cancelled", "Ready": "todo", "Icebox": "backlog", "Shipped": "done", "zzz": "backlog",
	} {
		if got, _ := NearestStatus(name); got != want {
			t.Errorf("NearestStatus(%q) = %s, want %s", name, got, want)
		}
	}
	if _, ok := NearestStatus("zzz"); ok {
		t.Error("zzz names a status")
	}
}
