package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// `cairn export --format markdown DIR` with the real binary
// (docs/decisions.md D41): a Backlog.md board that `cairn import DIR` reads
// back to the same tasks, byte for byte the same for the same store, and
// kept current by --watch while agents write through the daemon.

// readTree reads every file under dir: path in dir → bytes.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return nil // a watch renamed its temporary file meanwhile
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree says how two trees differ, or "" when they are identical.
func sameTree(a, b map[string]string) string {
	for name, data := range a {
		other, ok := b[name]
		if !ok {
			return "only in the first: " + name
		}
		if other != data {
			return fmt.Sprintf("%s differs:\n%s\n---\n%s", name, data, other)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			return "only in the second: " + name
		}
	}
	return ""
}

// exportMarkdown runs `cairn export --format markdown dir` and says how
// long it took.
func exportMarkdown(t *testing.T, w *workspace, env []string, dir string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	code, out, errOut := runCairn(t, w, "", append([]string{"CAIRN_LOG_LEVEL=error"}, env...), append([]string{"export", "--format", "markdown", dir}, args...)...)
	if code != 0 || !strings.HasPrefix(out, "exported ") {
		t.Fatalf("export markdown: %d %s %s", code, out, errOut)
	}
	return time.Since(start)
}

// 10,000 tasks: exported, exported again (the same bytes), imported into
// a fresh store and exported from there: the two boards are identical, and
// the imported tasks are the first store's, field by field.
func TestExportMarkdownRoundTrip(t *testing.T) {
	w := newWorkspace(t)
	var b strings.Builder
	for i := range importN {
		wt := genTask(i)
		line := map[string]any{"task_id": fmt.Sprintf("T-%d", i+1), "title": wt.title, "description": wt.description, "status": wt.status, "priority": wt.priority}
		if i%5 == 2 {
			line["labels"] = []string{"api", fmt.Sprintf("l%d", i%13)}
			line["assignee"] = fmt.Sprintf("agent-%d", i%4)
			line["estimate_hours"] = float64(i%40) / 2
		}
		if i%6 == 1 {
			line["progress"] = float64(i % 100)
		}
		if wt.status == "blocked" {
			line["blocked_reason"] = "waits on the vendor"
		}
		if i%9 == 4 {
			// Spaces at the ends and a line that looks like a fence.
			line["description"] = fmt.Sprintf("  indented %d\n## Description\n<!-- not a fence -->\n", i)
		}
		if i >= 10 && i%10 == 4 {
			line["parent_id"] = fmt.Sprintf("T-%d", i-2)
		}
		if i >= 30 && i%7 == 3 {
			line["depends_on"] = []string{fmt.Sprintf("T-%d", i-29), fmt.Sprintf("T-%d", i-10)}
		}
		raw, _ := json.Marshal(line)
		b.Write(raw)
		b.WriteByte('\n')
	}
	importRun(t, w, w.writeFile("tasks.jsonl", b.String(), 0o644))

	first := filepath.Join(t.TempDir(), "board")
	took := exportMarkdown(t, w, nil, first, "--project", "imp")
	t.Logf("export --format markdown of %d tasks: %v", importN, took)
	one := readTree(t, first)
	if len(one) != importN+1 {
		t.Fatalf("the board holds %d files, want %d tasks and config.yml", len(one), importN)
	}
	for _, want := range []string{"config.yml", "tasks/t-1 - Task-0-import-quoted-ünïcode.md", "completed/t-6 - Task-5-import-quoted-ünïcode.md", "archive/tasks/t-7 - Task-6-import-quoted-ünïcode.md"} {
		if _, ok := one[want]; !ok {
			t.Fatalf("the board has no %s", want)
		}
	}
	if !strings.Contains(one["config.yml"], `task_prefix: "T"`) {
		t.Fatalf("config.yml:\n%s", one["config.yml"])
	}
	again := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w, nil, again, "--project", "imp")
	if d := sameTree(one, readTree(t, again)); d != "" {
		t.Fatalf("two exports of one store differ: %s", d)
	}

	w2 := newWorkspace(t)
	if code, _, errOut := runCairn(t, w2, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	start := time.Now()
	code, out, errOut := runCairn(t, w2, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", first, "--project", "imp")
	if code != 0 {
		t.Fatalf("import of the board: %d %s %s", code, out, errOut)
	}
	t.Logf("import of the board: %v", time.Since(start))
	second := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w2, nil, second, "--project", "imp")
	if d := sameTree(one, readTree(t, second)); d != "" {
		t.Fatalf("the board read back exports differently: %s", d)
	}
	_, a := exportAll(t, w)
	_, z := exportAll(t, w2)
	if a, z := stripTimes(t, a), stripTimes(t, z); a != z {
		t.Fatalf("the board read back holds other tasks:\n%.500s\n---\n%.500s", a, z)
	}
}

// --watch keeps the board current through the daemon while sessions write
// concurrently: once the writes stop, the folder is what a fresh export
// writes; a later change shows within a second; SIGINT ends it cleanly.
func TestExportMarkdownWatchUnderConcurrentWrites(t *testing.T) {
	w := newWorkspace(t)
	sessions := startSessions(t, w, 4, func(int) []string { return daemonEnv })
	if _, err := callOK(sessions[0], "task_create", map[string]any{"title": "before the watch"}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "board")
	watch := startMarkdownWatch(t, w, dir)

	const writers, each = 8, 12
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := sessions[g%len(sessions)]
			for i := range each {
				out, err := callOK(s, "task_create", map[string]any{"title": fmt.Sprintf("w%d task %d", g, i), "labels": []string{fmt.Sprintf("w%d", g)}})
				if err != nil {
					errc <- err
					return
				}
				id, _ := out["task_id"].(string)
				steps := []map[string]any{
					{"task_id": id, "priority": "high"},
					{"task_id": id, "status": "todo", "description": "now on the board"},
				}
				if i%3 == 0 {
					steps = append(steps, map[string]any{"task_id": id, "status": "cancelled"})
				}
				for _, st := range steps {
					if _, err := callOK(s, "task_update", st); err != nil {
						errc <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	var diff string
	eventually(t, 60*time.Second, "the watched folder matches a fresh export", func() bool {
		_ = os.RemoveAll(fresh)
		exportMarkdown(t, w, daemonEnv, fresh)
		diff = sameTree(readTree(t, dir), readTree(t, fresh))
		return diff == ""
	})
	if n := len(readTree(t, dir)); n != writers*each+2 {
		t.Fatalf("the board holds %d files, want %d tasks and config.yml", n, writers*each+1)
	}

	// One more change: its file follows within a second (measured; the
	// deadline is generous for a busy machine), and the file it moved
	// from is gone.
	start := time.Now()
	if _, err := callOK(sessions[1], "task_update", map[string]any{"task_id": "T-1", "status": "cancelled"}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(dir, "archive", "tasks", "t-1 - before-the-watch.md")
	eventually(t, 30*time.Second, "the cancelled task's file in archive/tasks", func() bool {
		_, err := os.Stat(moved)
		return err == nil
	})
	t.Logf("a change reached the folder in %v", time.Since(start))
	if _, err := os.Stat(filepath.Join(dir, "tasks", "t-1 - before-the-watch.md")); !os.IsNotExist(err) {
		t.Fatalf("the file a moved task left stays: %v", err)
	}
	for name := range readTree(t, dir) {
		if strings.Contains(name, ".cairn-") {
			t.Fatalf("a temporary file stays: %s", name)
		}
	}

	watch.stop(t)
}

// A Backlog.md board as people keep it — a task_prefix, every folder,
// @handles, decisions — imports through the binary; its markdown export
// keeps each decision's text and reads back to the same board.
func TestExportMarkdownBoardWithDecisions(t *testing.T) {
	w := newWorkspace(t)
	board := filepath.Join(w.root, "backlog")
	longBody := strings.Repeat("Weighed and chosen. ", 400)
	files := map[string]string{
		"config.yml":                        "project_name: \"Demo\"\ndefault_status: \"To Do\"\ntask_prefix: \"back\"\n",
		"tasks/back-12 - Ship-it.md":        "---\nid: BACK-12\ntitle: Ship it\nstatus: In Progress\nassignee: @ann\ndependencies: [back-3, task-1]\ncreated_date: 2025-06-03 10:00\n---\n\n## Description\n\nShip.\n",
		"tasks/back-12.1 - Docs.md":         "---\nid: BACK-12.1\ntitle: Docs\nstatus: To Do\nparent_task_id: BACK-12\n---\n",
		"drafts/draft-1 - Idea.md":          "---\nid: DRAFT-1\ntitle: Idea\nstatus: To Do\n---\n",
		"completed/back-3 - Done.md":        "---\nid: BACK-3\ntitle: Done\nstatus: Done\n---\n",
		"completed/back-1 - First.md":       "---\nid: BACK-1\ntitle: First\nstatus: Done\n---\n",
		"archive/tasks/back-7 - Dropped.md": "---\nid: BACK-7\ntitle: Dropped\nstatus: To Do\n---\n",
		"decisions/decision-1 - Use-Go.md":  "---\ndate: \"2025-06-22\"\nid: decision-1\nstatus: accepted\ntitle: Use Go\n---\n## Context\n\nSpeed.\n\n## Decision\n\nGo.\n",
		"decisions/decision-2 - Long.md":    "---\nid: decision-2\ntitle: Long\n---\n" + longBody,
	}
	for name, data := range files {
		w.writeFile(filepath.Join("backlog", filepath.FromSlash(name)), data, 0o644)
	}
	if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", board, "--project", "imp", "--json")
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	var res struct {
		IDs map[string]string `json:"ids"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	ids := res.IDs
	if len(ids) != 7 || ids["back-12.1"] == "" || ids["draft-1"] == "" || ids["decisions"] == "" {
		t.Fatalf("ids %v", ids)
	}
	got, _ := exportAll(t, w)
	for key, status := range map[string]string{"back-12": "in_progress", "back-12.1": "todo", "draft-1": "backlog", "back-3": "done", "back-1": "done", "back-7": "cancelled"} {
		if g := got[ids[key]]; g.Status != status {
			t.Errorf("%s: status %q, want %q", key, g.Status, status)
		}
	}
	if g := got[ids["back-12"]]; g.Assignee != "ann" || strings.Join(g.DependsOn, ",") != ids["back-1"]+","+ids["back-3"] {
		t.Errorf("back-12 %+v", g)
	}
	if g := got[ids["back-12.1"]]; g.ParentID != ids["back-12"] {
		t.Errorf("back-12.1's parent %q", g.ParentID)
	}

	first := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w, nil, first, "--project", "imp")
	one := readTree(t, first)
	if one["decisions/decision-1 - Use-Go.md"] != files["decisions/decision-1 - Use-Go.md"] {
		t.Fatalf("decision-1 came back as:\n%s", one["decisions/decision-1 - Use-Go.md"])
	}
	if !strings.HasSuffix(one["decisions/decision-2 - Long.md"], "---\n"+longBody) {
		t.Fatalf("the long decision lost text: %d bytes", len(one["decisions/decision-2 - Long.md"]))
	}
	if len(one) != 6+2+1 {
		t.Fatalf("the board holds %d files: 6 tasks, 2 decisions and config.yml, not the Decisions task", len(one))
	}
	w2 := newWorkspace(t)
	if code, _, errOut := runCairn(t, w2, "", nil, "project", "add", "imp"); code != 0 {
		t.Fatalf("project add: %s", errOut)
	}
	if code, _, errOut := runCairn(t, w2, "", []string{"CAIRN_LOG_LEVEL=error"}, "import", first, "--project", "imp"); code != 0 {
		t.Fatalf("import of the export: %s", errOut)
	}
	second := filepath.Join(t.TempDir(), "board")
	exportMarkdown(t, w2, nil, second, "--project", "imp")
	if d := sameTree(one, readTree(t, second)); d != "" {
		t.Fatalf("the board read back exports differently: %s", d)
	}
}
