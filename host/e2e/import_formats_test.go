package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `cairn import` of each format people bring (docs/decisions.md D41),
// through the real binary, from the fixtures the importer's own tests
// read: a task-master file of three tags with dependencies across them,
// beads' issues.jsonl with every dependency type and status, and a Claude
// Code task list with blocks and blockedBy. The tasks land in the right
// projects with the right statuses, parents and dependencies.

const importFixtures = "../../plugins/core/importer/testdata"

// importFixture copies fixture (a file or a folder of files) into the
// workspace at rel and returns its path there.
func importFixture(t *testing.T, w *workspace, fixture, rel string) string {
	t.Helper()
	src := filepath.Join(importFixtures, fixture)
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsDir() {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		return w.writeFile(rel, string(raw), 0o644)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w.writeFile(filepath.Join(rel, e.Name()), string(raw), 0o644)
	}
	return filepath.Join(w.root, rel)
}

// importedAnswer is `cairn import --json`'s answer.
type importedAnswer struct {
	Project  string            `json:"project"`
	Projects []string          `json:"projects"`
	Imported int               `json:"imported"`
	IDs      map[string]string `json:"ids"`
}

// importInto runs `cairn import` with args in a workspace whose default
// project is app.
func importInto(t *testing.T, w *workspace, args ...string) importedAnswer {
	t.Helper()
	code, out, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error", "CAIRN_PROJECT=app"}, append([]string{"import", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("import %v: %d %s", args, code, errOut)
	}
	var a importedAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("import answer %q: %v", out, err)
	}
	return a
}

// exportProject reads a project's tasks back through `cairn export tasks`,
// by task id.
func exportProject(t *testing.T, w *workspace, project string) map[string]exported {
	t.Helper()
	out := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errOut := runCairn(t, w, "", []string{"CAIRN_LOG_LEVEL=error"}, "export", "tasks", "--project", project, "-o", out); code != 0 {
		t.Fatalf("export %s: %d %s", project, code, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	byID := map[string]exported{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e exported
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		byID[e.TaskID] = e
	}
	return byID
}

// landed is where and how an imported task must be: its project, status,
// parent and dependencies by source id, and a text its description holds.
type landed struct {
	key, project, status, parent string
	deps                         []string
	says                         string
}

// checkLanded compares each exported task with want.
func checkLanded(t *testing.T, w *workspace, a importedAnswer, want []landed) {
	t.Helper()
	if a.Imported != len(want) || len(a.IDs) != len(want) {
		t.Fatalf("imported %d tasks (%d ids), want %d", a.Imported, len(a.IDs), len(want))
	}
	byProject := map[string]map[string]exported{}
	for _, l := range want {
		got, ok := byProject[l.project]
		if !ok {
			got = exportProject(t, w, l.project)
			byProject[l.project] = got
		}
		id := a.IDs[l.key]
		g, ok := got[id]
		if !ok {
			t.Fatalf("task %s (source %s) is not in project %s", id, l.key, l.project)
		}
		parent := ""
		if l.parent != "" {
			parent = a.IDs[l.parent]
		}
		deps := []string{}
		for _, d := range l.deps {
			deps = append(deps, a.IDs[d])
		}
		slices.SortFunc(deps, func(x, y string) int { return taskNum(x) - taskNum(y) })
		gotDeps := g.DependsOn
		if gotDeps == nil {
			gotDeps = []string{}
		}
		if g.Status != l.status || g.ParentID != parent || !slices.Equal(gotDeps, deps) || !strings.Contains(g.Description, l.says) {
			t.Errorf("task %s (source %s):\n got %+v\nwant %+v (parent %s, deps %v)", id, l.key, g, l, parent, deps)
		}
	}
	total := 0
	for _, got := range byProject {
		total += len(got)
	}
	if total != len(want) {
		t.Fatalf("the projects hold %d tasks, want %d", total, len(want))
	}
}

func TestImportEachFormat(t *testing.T) {
	t.Run("taskmaster every tag", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t)
		file := importFixture(t, w, "taskmaster/tasks.json", ".taskmaster/tasks/tasks.json")
		a := importInto(t, w, file)
		if a.Project != "app" || !slices.Equal(a.Projects, []string{"feature-x", "bug-fixes"}) {
			t.Fatalf("answer %+v", a)
		}
		checkLanded(t, w, a, []landed{
			{key: "1", project: "app", status: "done", says: "## Details"},
			{key: "1.1", project: "app", status: "done", parent: "1"},
			{key: "1.2", project: "app", status: "done", parent: "1", deps: []string{"1.1"}},
			{key: "2", project: "app", status: "in_progress", deps: []string{"1"}},
			{key: "feature-x:1", project: "feature-x", status: "review", says: "- task 2 of tag master"},
			{key: "feature-x:1.1", project: "feature-x", status: "todo", parent: "feature-x:1", says: "- task 1.2 of tag master"},
			{key: "feature-x:3", project: "feature-x", status: "blocked", deps: []string{"feature-x:1"}},
			{key: "feature-x:4", project: "feature-x", status: "todo", deps: []string{"feature-x:3"}},
			{key: "Bug_Fixes:1", project: "bug-fixes", status: "backlog", says: "- task 4 of tag feature-x"},
			{key: "Bug_Fixes:2", project: "bug-fixes", status: "cancelled"},
			{key: "Bug_Fixes:3", project: "bug-fixes", status: "done", deps: []string{"Bug_Fixes:2"}},
		})
	})
	t.Run("taskmaster tags into one project", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t)
		file := importFixture(t, w, "taskmaster/tasks.json", "tasks.json")
		if code, _, errOut := runCairn(t, w, "", nil, "project", "add", "one"); code != 0 {
			t.Fatalf("project add: %s", errOut)
		}
		a := importInto(t, w, file, "--project", "one", "--tag", "feature-x", "--tag", "master")
		if a.Project != "one" || len(a.Projects) != 0 {
			t.Fatalf("answer %+v", a)
		}
		checkLanded(t, w, a, []landed{
			{key: "1", project: "one", status: "done"},
			{key: "1.1", project: "one", status: "done", parent: "1"},
			{key: "1.2", project: "one", status: "done", parent: "1", deps: []string{"1.1"}},
			{key: "2", project: "one", status: "in_progress", deps: []string{"1"}},
			{key: "feature-x:1", project: "one", status: "review", deps: []string{"2"}},
			{key: "feature-x:1.1", project: "one", status: "todo", parent: "feature-x:1", deps: []string{"1.2"}},
			{key: "feature-x:3", project: "one", status: "blocked", deps: []string{"feature-x:1"}},
			{key: "feature-x:4", project: "one", status: "todo", deps: []string{"feature-x:3"}},
		})
	})
	t.Run("beads", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t)
		file := importFixture(t, w, "beads/issues.jsonl", ".beads/issues.jsonl")
		a := importInto(t, w, file)
		checkLanded(t, w, a, []landed{
			{key: "bd-a1b2", project: "app", status: "todo", says: "## Acceptance criteria\n\nEvery format imports."},
			{key: "bd-c3d4", project: "app", status: "in_progress", parent: "bd-a1b2"},
			{key: "bd-e5f6", project: "app", status: "blocked", parent: "bd-a1b2", deps: []string{"bd-c3d4"}},
			{key: "bd-g7h8", project: "app", status: "backlog", says: "- discovered-from: bd-e5f6\n- related: bd-c3d4"},
			{key: "bd-i9j0", project: "app", status: "done", says: "Replaced by the new reader"},
			{key: "bd-k1l2", project: "app", status: "todo"},
			{key: "bd-m3n4", project: "app", status: "in_progress", parent: "bd-a1b2", deps: []string{"bd-e5f6"}},
		})
	})
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		w := newWorkspace(t)
		dir := importFixture(t, w, "claude/list", "list")
		a := importInto(t, w, dir)
		checkLanded(t, w, a, []landed{
			{key: "1", project: "app", status: "done"},
			{key: "2", project: "app", status: "in_progress", deps: []string{"1"}},
			{key: "3", project: "app", status: "todo", deps: []string{"1"}, says: "## Metadata"},
			{key: "4", project: "app", status: "todo", deps: []string{"2", "3"}},
			{key: "10", project: "app", status: "todo", deps: []string{"3", "4"}},
		})
	})
}
