package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// A Backlog.md board and a beads file whose items are not all right (a
// status the board's config.yml adds, a custom beads status, a priority
// of none of the tool's, a bad date, a file whose front matter is not
// YAML, an issue whose title is not text) are imported item by item by
// default: each mended or skipped item is in the report with its place,
// rule and fix. --strict refuses each input whole, naming the file, the
// line and the field, and writes nothing (docs/decisions.md D41).
func TestImportLenientReaders(t *testing.T) {
	w := newWorkspace(t)
	board := w.writeFile("board/backlog/config.yml", "task_prefix: task\nstatuses: [To Do, Waiting on design, Done]\n", 0o644)
	board = strings.TrimSuffix(board, "/backlog/config.yml")
	w.writeFile("board/backlog/tasks/task-1 - a.md", "---\nid: task-1\ntitle: a\nstatus: Waiting on design\n---\n", 0o644)
	w.writeFile("board/backlog/tasks/task-2 - b.md", "---\nid: task-2\ntitle: b\nstatus: To Do\npriority: urgent\ncreated_date: last tuesday\n---\n", 0o644)
	w.writeFile("board/backlog/tasks/task-3 - c.md", "---\nid: task-3\ntitle: [c\n---\n", 0o644)
	w.writeFile("board/backlog/tasks/task-4 - d.md", "---\nid: task-4\ntitle: d\nstatus: Done\ndependencies: [task-3]\n---\n", 0o644)
	beads := w.writeFile("beads/issues.jsonl", `{"id":"bd-1","title":"a","status":"in_review","priority":1}
{"id":"bd-2","title":["not text"],"status":"open"}
{"id":"bd-3","title":"c","status":"open","priority":7}
`, 0o644)
	for _, p := range []string{"imp", "bd"} {
		if code, _, errOut := runCairn(t, w, "", nil, "project", "add", p); code != 0 {
			t.Fatalf("project add: %s", errOut)
		}
	}
	env := []string{"CAIRN_LOG_LEVEL=error"}
	type entry struct{ place, field, rule, action string }
	cases := []struct {
		path, format, project    string
		imported, changes, skip  int
		want                     []entry
		strictPlace, strictField string
	}{{
		path: board, format: "backlog", project: "imp", imported: 3, changes: 4, skip: 1,
		want: []entry{
			{"task-1 - a.md line 4, task task-1", "status", "enum", "imported with status blocked"},
			{"task-2 - b.md line 5, task task-2", "priority", "enum", "imported with priority normal"},
			{"task-2 - b.md line 6, task task-2", "created_date", "format", "imported without its created_date"},
			{"task-3 - c.md, task task-3", "", "format", "skipped the task: the frontmatter is not YAML"},
			{"task-4 - d.md, task task-4", "depends_on", "exists", "which the import skipped"},
		},
		strictPlace: "task-1 - a.md line 4", strictField: "field status",
	}, {
		path: beads, format: "beads", project: "bd", imported: 2, changes: 2, skip: 1,
		want: []entry{
			{"issues.jsonl line 1, task bd-1", "status", "enum", "imported with status review"},
			{"issues.jsonl line 2, task bd-2", "title", "type", "skipped the task"},
			{"issues.jsonl line 3, task bd-3", "priority", "enum", "imported with priority normal"},
		},
		strictPlace: "issues.jsonl line 1", strictField: "field status",
	}}
	for _, c := range cases {
		code, _, errOut := runCairn(t, w, "", env, "import", c.path, "--format", c.format, "--project", c.project, "--strict")
		if code != 1 || !strings.Contains(errOut, "ERR_INVALID_INPUT") || !strings.Contains(errOut, c.strictPlace) || !strings.Contains(errOut, c.strictField) {
			t.Fatalf("%s strict: exit %d %s", c.format, code, errOut)
		}
	}
	if all, _ := exportAll(t, w); len(all) != 0 {
		t.Fatalf("a refused strict import wrote %d tasks", len(all))
	}
	for _, c := range cases {
		code, out, errOut := runCairn(t, w, "", env, "import", c.path, "--format", c.format, "--project", c.project, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d %s", c.format, code, errOut)
		}
		var res struct {
			Imported, Changes, Skipped int
			IDs                        map[string]string `json:"ids"`
			Report                     []struct{ Place, Field, Rule, Action, Fix string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if res.Imported != c.imported || res.Changes != c.changes || res.Skipped != c.skip || len(res.Report) != len(c.want) {
			t.Fatalf("%s: imported %d, %d changes, %d skipped: %+v", c.format, res.Imported, res.Changes, res.Skipped, res.Report)
		}
		for i, wt := range c.want {
			r := res.Report[i]
			if !strings.Contains(r.Place, wt.place) || r.Field != wt.field || r.Rule != wt.rule || !strings.Contains(r.Action, wt.action) || r.Fix == "" {
				t.Errorf("%s: report entry %d: %+v, want %+v", c.format, i, r, wt)
			}
		}
	}
	// The board's three, task-1 blocked with a reason cairn requires.
	all, _ := exportAll(t, w)
	if len(all) != cases[0].imported {
		t.Fatalf("project imp holds %d tasks, want %d", len(all), cases[0].imported)
	}
}
