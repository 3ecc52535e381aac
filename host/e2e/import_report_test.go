package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A task-master tasks.json with the defects people's real files have (a
// duplicate subtask id 42.42, texts far over the description's limit, a
// cycle 12.1 → 12.4 → 12.1, a dependency on a task of another tag) is
// imported whole by default, with a report naming each change; --dry-run
// writes nothing and --strict refuses it; task_get shows each task's
// source id and the whole text is in its trail (docs/decisions.md D41).
func TestImportReportsTaskMasterDefects(t *testing.T) {
	w := newWorkspace(t)
	long := func(n int, word string) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(word + " ")
		}
		return b.String()[:n]
	}
	details := long(17_999, "details") // ends in a word: task-master's reader trims the text
	sub := func(id int, title string, deps ...any) map[string]any {
		return map[string]any{"id": id, "title": title, "description": "d", "status": "pending", "dependencies": append([]any{}, deps...)}
	}
	tasksJSON := map[string]any{
		"master": map[string]any{"tasks": []any{
			map[string]any{"id": 12, "title": "twelve", "description": "d", "status": "pending", "dependencies": []any{}, "subtasks": []any{
				sub(1, "12.1", 4), sub(4, "12.4", 1),
			}},
			map[string]any{"id": 42, "title": "forty-two", "description": "d", "details": details, "status": "in-progress", "dependencies": []any{"7"}, "subtasks": []any{
				sub(42, "first 42.42"), sub(42, "second 42.42"),
			}},
		}},
		"other": map[string]any{"tasks": []any{map[string]any{"id": 7, "title": "seven", "status": "pending", "dependencies": []any{}}}},
	}
	raw, _ := json.MarshalIndent(tasksJSON, "", "  ")
	file := w.writeFile(".taskmaster/tasks/tasks.json", string(raw), 0o644)
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	env := []string{"CAIRN_LOG_LEVEL=error"}
	countTasks := func() int {
		all, _ := exportAll(t, w)
		return len(all)
	}

	// A dry run prints the report and writes nothing.
	code, out, errOut := runCairn(t, w, "", env, "import", file, "--project", "imp", "--tag", "master", "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run: would import 6 tasks") || !strings.Contains(out, "fix: ") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errOut)
	}
	if n := countTasks(); n != 0 {
		t.Fatalf("a dry run wrote %d tasks", n)
	}
	// Strict refuses the whole input at its first problem.
	if code, _, errOut := runCairn(t, w, "", env, "import", file, "--project", "imp", "--tag", "master", "--strict"); code != 1 || !strings.Contains(errOut, "ERR_INVALID_INPUT") {
		t.Fatalf("strict: exit %d %s", code, errOut)
	}
	if n := countTasks(); n != 0 {
		t.Fatalf("a refused strict import wrote %d tasks", n)
	}

	code, out, errOut = runCairn(t, w, "", env, "import", file, "--project", "imp", "--tag", "master", "--json")
	if code != 0 {
		t.Fatalf("import: exit %d %s", code, errOut)
	}
	var res struct {
		Imported int               `json:"imported"`
		IDs      map[string]string `json:"ids"`
		Changes  int               `json:"changes"`
		Skipped  int               `json:"skipped"`
		Report   []struct {
			Place, Field, Rule, Action, Fix string
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Imported != 6 || res.Changes != 4 || res.Skipped != 0 || len(res.Report) != 4 {
		t.Fatalf("imported %d, %d changes, %d skipped: %+v", res.Imported, res.Changes, res.Skipped, res.Report)
	}
	want := []struct{ field, rule, action string }{
		{"description", "maxLength", "thought trail"},
		{"task_id", "uniqueItems", "imported as 42.42-2"},
		{"depends_on", "exists", "dependency on 7"},
		{"depends_on", "acyclic", "12.1 → 12.4 → 12.1"},
	}
	for _, wt := range want {
		found := false
		for _, r := range res.Report {
			if r.Field == wt.field && r.Rule == wt.rule && strings.Contains(r.Action, wt.action) && strings.Contains(r.Place, "tasks.json line ") && r.Fix != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no report entry %s/%s %q in %+v", wt.field, wt.rule, wt.action, res.Report)
		}
	}

	s := w.serve()
	for key, id := range res.IDs {
		got, err := callOK(s, "task_get", map[string]any{"task_id": id})
		if err != nil {
			t.Fatal(err)
		}
		src, _ := got["source"].(map[string]any)
		if src["id"] != key || src["format"] != "taskmaster" {
			t.Fatalf("task_get %s (%s) shows source %v", id, key, got["source"])
		}
	}
	// The whole text: the description's beginning, then the trail's
	// records in order.
	th, err := callOK(s, "thought_record_list", map[string]any{"task_id": res.IDs["42"], "limit": 100})
	if err != nil {
		t.Fatal(err)
	}
	var whole strings.Builder
	for _, r := range th["thoughts"].([]any) {
		content := r.(map[string]any)["content"].(string)
		if _, part, ok := strings.Cut(content, "\n\n"); ok && strings.HasPrefix(content, "imported text: description") {
			whole.WriteString(part)
		}
	}
	if !strings.Contains(whole.String(), details) {
		t.Fatalf("the trail holds %d characters, not the %d of the details", whole.Len(), len(details))
	}
	found, err := callOK(s, "task_list", map[string]any{"project": "imp", "search": "42.42-2"})
	if err != nil || fmt.Sprint(found["total_count"]) != "1" {
		t.Fatalf("search for 42.42-2: %v %v", found, err)
	}
}
