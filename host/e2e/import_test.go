package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// `cairn import` with the real binary (docs/decisions.md D41): 10,000 tasks
// from each format, read back field by field with `cairn export tasks`,
// their chains verified by `cairn store check`; a malformed file is refused
// naming its line and field and leaves the store as it was.

const importN = 10_000

// wantTask is what an imported task must hold, in cairn's terms; Parent and
// Deps are indexes of other generated tasks (-1: none).
type wantTask struct {
	title, description, status, priority, assignee, reason string
	labels                                                 []string
	progress                                               float64
	estimate                                               *float64
	parent                                                 int
	deps                                                   []int
}

// exported is one line of `cairn export tasks`.
type exported struct {
	TaskID        string   `json:"task_id"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	Project       string   `json:"project"`
	ParentID      string   `json:"parent_id"`
	Status        string   `json:"status"`
	Priority      string   `json:"priority"`
	Progress      float64  `json:"progress"`
	Assignee      string   `json:"assignee"`
	Labels        []string `json:"labels"`
	EstimateHours *float64 `json:"estimate_hours"`
	BlockedReason string   `json:"blocked_reason"`
	DependsOn     []string `json:"depends_on"`
	CreatedBy     string   `json:"created_by"`
	Sequence      uint64   `json:"sequence"`
}

var importStatuses = []string{"backlog", "todo", "in_progress", "blocked", "review", "done", "cancelled"}

// importRun imports file into project imp of a fresh workspace and
// returns the workspace and the task id each source key got.
func importRun(t *testing.T, w *workspace, file string, extra ...string) map[string]string {
	t.Helper()
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	args := append([]string{"import", file, "--project", "imp", "--json"}, extra...)
	code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, args...)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	var res struct {
		Imported int               `json:"imported"`
		IDs      map[string]string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Imported != importN || len(res.IDs) != importN {
		t.Fatalf("import answered %d tasks (%v): %.300s", res.Imported, err, out)
	}
	return res.IDs
}

// exportAll reads the project's tasks back through `cairn export tasks`.
func exportAll(t *testing.T, w *workspace) (map[string]exported, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "export", "tasks", "--project", "imp", "-o", out); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]exported{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e exported
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		byID[e.TaskID] = e
	}
	return byID, string(raw)
}

// checkImported compares every exported task with what was generated,
// field by field, and verifies every chain with `cairn store check`.
func checkImported(t *testing.T, w *workspace, keys []string, want []wantTask, ids map[string]string) {
	t.Helper()
	got, _ := exportAll(t, w)
	if len(got) != len(want) {
		t.Fatalf("exported %d tasks, want %d", len(got), len(want))
	}
	seqs := map[uint64]bool{}
	for i, wt := range want {
		id := ids[keys[i]]
		g, ok := got[id]
		if !ok {
			t.Fatalf("task %s (source %s) not exported", id, keys[i])
		}
		parent := ""
		if wt.parent >= 0 {
			parent = ids[keys[wt.parent]]
		}
		deps := []string{}
		for _, d := range wt.deps {
			deps = append(deps, ids[keys[d]])
		}
		slices.SortFunc(deps, func(a, b string) int { return taskNum(a) - taskNum(b) })
		gotDeps := g.DependsOn
		if gotDeps == nil {
			gotDeps = []string{}
		}
		labels := wt.labels
		if labels == nil {
			labels = []string{}
		}
		assignee := wt.assignee
		if assignee == "" {
			assignee = "unassigned"
		}
		estOK := (wt.estimate == nil) == (g.EstimateHours == nil) && (wt.estimate == nil || *wt.estimate == *g.EstimateHours)
		progress := wt.progress
		if wt.status == "done" {
			progress = 100 // a done task shows 100 (docs/decisions.md D8)
		}
		if g.Title != wt.title || g.Description != wt.description || g.Status != wt.status || g.Priority != wt.priority ||
			g.Assignee != assignee || !slices.Equal(g.Labels, labels) || g.Progress != progress || !estOK ||
			g.BlockedReason != wt.reason || g.ParentID != parent || !slices.Equal(gotDeps, deps) || g.Project != "imp" || g.CreatedBy == "" {
			t.Fatalf("task %s (source %s):\n got %+v\nwant %+v (parent %s, deps %v)", id, keys[i], g, wt, parent, deps)
		}
		seqs[g.Sequence] = true
	}
	for s := uint64(1); s <= uint64(len(want)); s++ {
		if !seqs[s] {
			t.Fatalf("sequence %d missing: sequences are not 1..%d", s, len(want))
		}
	}
	if code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "store", "check"); code != 0 {
		t.Fatalf("store check after the import: %d %s %s", code, out, errOut)
	}
}

func taskNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "T-"))
	return n
}

// genTask is the i-th generated task: every status, some sub-tasks and
// dependencies (always on earlier tasks), labels, assignees, estimates.
func genTask(i int) wantTask {
	wt := wantTask{title: fmt.Sprintf("Task %d: import \"quoted\" ünïcode", i), status: importStatuses[i%7], priority: "normal", parent: -1}
	if i%3 == 0 {
		wt.description = fmt.Sprintf("Line one of %d.\n\nLine two with `code`.", i)
	}
	switch i % 4 {
	case 1:
		wt.priority = "high"
	case 2:
		wt.priority = "low"
	}
	return wt
}

func TestImportJSONLRoundTrip(t *testing.T) {
	w := newWorkspace(t)
	var b strings.Builder
	keys := make([]string, importN)
	want := make([]wantTask, importN)
	for i := range want {
		wt := genTask(i)
		keys[i] = fmt.Sprintf("T-%d", i+1)
		if i%5 == 2 {
			wt.labels = []string{"api", fmt.Sprintf("l%d", i%13)}
			wt.assignee = fmt.Sprintf("agent-%d", i%4)
			e := float64(i%40) / 2
			wt.estimate = &e
		}
		if i%6 == 1 {
			wt.progress = float64(i % 100)
		}
		if wt.status == "blocked" {
			wt.reason = "waits on the vendor"
		}
		if i >= 10 && i%10 == 4 {
			wt.parent = i - 3
		}
		if i >= 30 && i%7 == 3 {
			wt.deps = []int{i - 30, i - 11}
		}
		want[i] = wt
		line := map[string]any{"task_id": keys[i], "title": wt.title, "description": wt.description, "status": wt.status, "priority": wt.priority, "progress": wt.progress, "labels": wt.labels, "created_at": "2026-01-01T00:00:00.000Z", "sequence": i + 1}
		if wt.assignee != "" {
			line["assignee"] = wt.assignee
		}
		if wt.estimate != nil {
			line["estimate_hours"] = *wt.estimate
		}
		if wt.reason != "" {
			line["blocked_reason"] = wt.reason
		}
		if wt.parent >= 0 {
			line["parent_id"] = keys[wt.parent]
		}
		if len(wt.deps) > 0 {
			line["depends_on"] = []string{keys[wt.deps[0]], keys[wt.deps[1]]}
		}
		raw, _ := json.Marshal(line)
		b.Write(raw)
		b.WriteByte('\n')
	}
	file := w.writeFile("tasks.jsonl", b.String(), 0o644)
	ids := importRun(t, w, file)
	checkImported(t, w, keys, want, ids)

	// The round trip: the export, imported into a fresh store, exports
	// the same tasks (times and actors aside, which the import makes anew).
	_, first := exportAll(t, w)
	w2 := newWorkspace(t)
	again := w2.writeFile("again.jsonl", first, 0o644)
	importRun(t, w2, again)
	_, second := exportAll(t, w2)
	if a, b := stripTimes(t, first), stripTimes(t, second); a != b {
		t.Fatalf("the round trip changed the tasks:\n%.500s\n---\n%.500s", a, b)
	}

	// Strict, a malformed line is refused naming its line and field; the
	// store is as it was.
	lines := strings.SplitAfter(first, "\n")
	lines[4999] = strings.Replace(lines[4999], `"priority":"`, `"priority":"urgent-`, 1)
	bad := w2.writeFile("bad.jsonl", strings.Join(lines, ""), 0o644)
	code, _, errOut := runCairn(t, w2, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", bad, "--project", "imp", "--strict")
	if code != 1 || !strings.Contains(errOut, "bad.jsonl line 5000, field priority:") {
		t.Fatalf("malformed import: %d %s", code, errOut)
	}
	if _, after := exportAll(t, w2); after != second {
		t.Fatal("a refused import changed the store")
	}
}

// stripTimes drops what an import makes anew from an export.
func stripTimes(t *testing.T, export string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		// The source is where each import read the task: the first
		// file's keys, then the export's task ids.
		for _, k := range []string{"created_at", "updated_at", "created_by", "updated_by", "source"} {
			delete(m, k)
		}
		raw, _ := json.Marshal(m)
		out.Write(raw)
		out.WriteByte('\n')
	}
	return out.String()
}

func TestImportTaskMaster(t *testing.T) {
	w := newWorkspace(t)
	tmStatus := map[string]string{"backlog": "deferred", "todo": "pending", "in_progress": "in-progress", "blocked": "blocked", "review": "review", "done": "done", "cancelled": "cancelled"}
	tmPriority := map[string]string{"normal": "medium", "high": "high", "low": "low"}
	keys := make([]string, importN)
	want := make([]wantTask, importN)
	var top []map[string]any
	for i := range want {
		wt := genTask(i)
		task := map[string]any{"title": wt.title, "description": wt.description, "status": tmStatus[wt.status], "priority": tmPriority[wt.priority]}
		if wt.status == "blocked" {
			wt.reason = "marked blocked in task-master"
		}
		if i%9 == 4 {
			task["details"] = fmt.Sprintf("Details of %d.", i)
			task["testStrategy"] = "Run the suite."
			wt.description = strings.TrimSpace(wt.description + "\n\n## Details\n\nDetails of " + strconv.Itoa(i) + ".\n\n## Test strategy\n\nRun the suite.")
		}
		if i%5 == 0 {
			// A top-level task; it depends on the top-level task before.
			id := i/5 + 1
			keys[i] = strconv.Itoa(id)
			task["id"] = id
			task["dependencies"] = []any{}
			task["subtasks"] = []any{}
			if id > 1 && id%3 == 0 {
				task["dependencies"] = []any{id - 1}
				wt.deps = []int{i - 5}
			}
			top = append(top, task)
		} else {
			// A subtask of the last top-level task; it depends on its
			// previous sibling.
			parent := i - i%5
			sub := i % 5
			keys[i] = fmt.Sprintf("%d.%d", parent/5+1, sub)
			wt.parent = parent
			task["id"] = sub
			task["dependencies"] = []any{}
			if sub > 1 && i%2 == 0 {
				task["dependencies"] = []any{sub - 1}
				wt.deps = []int{i - 1}
			}
			p := top[len(top)-1]
			p["subtasks"] = append(p["subtasks"].([]any), task)
		}
		want[i] = wt
	}
	raw, _ := json.MarshalIndent(map[string]any{"master": map[string]any{"tasks": top, "metadata": map[string]any{"description": "tagged"}}}, "", "  ")
	file := w.writeFile(".taskmaster/tasks/tasks.json", string(raw), 0o644)
	ids := importRun(t, w, file)
	checkImported(t, w, keys, want, ids)

	bad := w.writeFile("bad.json", strings.Replace(string(raw), `"status": "review"`, `"status": "reviewing"`, 1), 0o644)
	line := 1 + strings.Count(string(raw)[:strings.Index(string(raw), `"status": "review"`)], "\n")
	before, _ := exportAll(t, w)
	// A status task-master lacks: --strict refuses the file naming it
	// (by default it is mended, docs/decisions.md D41).
	code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", bad, "--project", "imp", "--strict")
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("bad.json line %d, field status:", line)) {
		t.Fatalf("malformed tasks.json (status on line %d): %d %s", line, code, errOut)
	}
	if after, _ := exportAll(t, w); len(after) != len(before) {
		t.Fatal("a refused import changed the store")
	}
}

func TestImportBacklog(t *testing.T) {
	w := newWorkspace(t)
	blStatus := map[string]string{"backlog": "Backlog", "todo": "To Do", "in_progress": "In Progress", "blocked": "Blocked", "review": "Review", "done": "Done", "cancelled": "Cancelled"}
	blPriority := map[string]string{"normal": "medium", "high": "high", "low": "low"}
	dir := filepath.Join(w.root, "backlog", "tasks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, importN)
	want := make([]wantTask, importN)
	for i := range want {
		wt := genTask(i)
		wt.title = strings.ReplaceAll(wt.title, `"`, "'")
		keys[i] = fmt.Sprintf("task-%d", i+1)
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\nid: TASK-%d\ntitle: %q\nstatus: %s\npriority: %s\ncreated_date: '2025-06-03 10:00'\n", i+1, wt.title, blStatus[wt.status], blPriority[wt.priority])
		if wt.status == "blocked" {
			wt.reason = "marked blocked in Backlog.md"
		}
		if i%5 == 2 {
			wt.labels = []string{"api", fmt.Sprintf("l%d", i%13)}
			wt.assignee = fmt.Sprintf("agent-%d", i%4)
			fmt.Fprintf(&fm, "assignee:\n  - '@%s'\nlabels: [%s]\n", wt.assignee, strings.Join(wt.labels, ", "))
		}
		if i >= 10 && i%10 == 4 {
			wt.parent = i - 3
			fmt.Fprintf(&fm, "parent_task_id: %s\n", keys[i-3])
		}
		if i >= 30 && i%7 == 3 {
			wt.deps = []int{i - 30, i - 11}
			fmt.Fprintf(&fm, "dependencies:\n  - %s\n  - %s\n", keys[i-30], keys[i-11])
		}
		fm.WriteString("---\n\n")
		if wt.description != "" {
			fmt.Fprintf(&fm, "## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n%s\n<!-- SECTION:DESCRIPTION:END -->\n", wt.description)
		}
		if i%8 == 5 {
			fm.WriteString("\n## Acceptance Criteria\n<!-- AC:BEGIN -->\n- [ ] #1 it works\n<!-- AC:END -->\n")
			wt.description = strings.TrimSpace(wt.description + "\n\n## Acceptance Criteria\n- [ ] #1 it works")
		}
		name := filepath.Join(dir, fmt.Sprintf("task-%d - Task %d.md", i+1, i))
		if err := os.WriteFile(name, []byte(fm.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		want[i] = wt
	}
	ids := importRun(t, w, filepath.Join(w.root, "backlog"))
	checkImported(t, w, keys, want, ids)

	badDir := filepath.Join(w.root, "bad", "tasks")
	if err := os.MkdirAll(badDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		body := fmt.Sprintf("---\nid: task-%d\ntitle: t%d\nstatus: To Do\n---\n", i, i)
		if i == 2 {
			body = "---\nid: task-2\ntitle: t2\nstatus: To Do\ndependencies:\n  - task-9\n---\n"
		}
		if err := os.WriteFile(filepath.Join(badDir, fmt.Sprintf("task-%d - t.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := exportAll(t, w)
	code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", filepath.Join(w.root, "bad"), "--project", "imp", "--strict")
	if code != 1 || !strings.Contains(errOut, "task-2 - t.md, field depends_on:") {
		t.Fatalf("malformed board: %d %s", code, errOut)
	}
	if after, _ := exportAll(t, w); len(after) != len(before) {
		t.Fatal("a refused import changed the store")
	}
}

// Through a running daemon the import is the daemon's core area's: a
// session of that daemon reads the imported tasks at once.
func TestImportThroughDaemon(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	file := w.writeFile("few.jsonl", `{"task_id":"a","title":"first","status":"done"}
{"task_id":"b","title":"second","depends_on":["a"],"parent_id":"a","labels":["x"]}
`, 0o644)
	code, out, errOut := runCairn(t, w, "", daemonEnv, "import", file, "--json")
	if code != 0 {
		t.Fatalf("import through the daemon: %d %s", code, errOut)
	}
	var res struct {
		Project string            `json:"project"`
		IDs     map[string]string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Project != "web" {
		t.Fatalf("import answered %s (%v); want the session's project web (CAIRN_PROJECT)", out, err)
	}
	got, err := callOK(s, "task_get", map[string]any{"task_id": res.IDs["b"]})
	if err != nil {
		t.Fatal(err)
	}
	if got["title"] != "second" || got["parent_id"] != res.IDs["a"] || fmt.Sprint(got["depends_on"]) != "["+res.IDs["a"]+"]" || got["project"] != "web" {
		t.Fatalf("the session reads %v", got)
	}
	if first, _ := callOK(s, "task_get", map[string]any{"task_id": res.IDs["a"]}); first["status"] != "done" {
		t.Fatalf("first task: %v", first)
	}
}

// An import killed in the middle (SIGKILL of the command and so of its core
// area) is never half there: the next command that opens the store
// completes it from the journal, or finds nothing if the kill came before
// the journal was written.
func TestImportKilledIsNeverHalfDone(t *testing.T) {
	w := newWorkspace(t)
	var b strings.Builder
	for i := range importN {
		line, _ := json.Marshal(map[string]any{"task_id": fmt.Sprintf("T-%d", i+1), "title": fmt.Sprintf("task %d", i), "status": importStatuses[i%7], "blocked_reason": "vendor"})
		b.Write(line)
		b.WriteByte('\n')
	}
	file := w.writeFile("kill.jsonl", b.String(), 0o644)
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	cmd := exec.Command(cairnBin, "import", file, "--project", "imp")
	cmd.Env = append(append([]string{}, w.env...), "CAIRN_LOG_LEVEL=error")
	cmd.Dir = w.root
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill the import part way: either outcome must leave no half import.
	time.Sleep(3 * time.Second)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// The killed core area lets go of the store when it notices its
	// parent is gone.
	var got map[string]exported
	resumed := false
	eventually(t, 30*time.Second, "an export after the kill", func() bool {
		out := filepath.Join(t.TempDir(), "after.jsonl")
		code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=info"}, "export", "tasks", "--project", "imp", "-o", out)
		if code != 0 {
			return false
		}
		resumed = strings.Contains(errOut, "completed an interrupted import")
		raw, err := os.ReadFile(out)
		if err != nil {
			return false
		}
		got = map[string]exported{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var e exported
			if line != "" && json.Unmarshal([]byte(line), &e) == nil {
				got[e.TaskID] = e
			}
		}
		return true
	})
	if len(got) != 0 && len(got) != importN {
		t.Fatalf("after the kill the store holds %d of %d tasks", len(got), importN)
	}
	t.Logf("after the kill: %d tasks; completed from the journal on the next open: %v", len(got), resumed)
	for i := range len(got) {
		if e := got[fmt.Sprintf("T-%d", i+1)]; e.Title != fmt.Sprintf("task %d", i) || e.Status != importStatuses[i%7] {
			t.Fatalf("task T-%d after completion: %+v", i+1, e)
		}
	}
	if code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "store", "check"); code != 0 {
		t.Fatalf("store check after the kill: %d %s %s", code, out, errOut)
	}
}
