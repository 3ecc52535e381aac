package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// byKey indexes tasks by key, failing on a key read twice.
func byKey(t *testing.T, ts []Task) map[string]Task {
	t.Helper()
	m := map[string]Task{}
	for _, x := range ts {
		if _, dup := m[x.Key]; dup {
			t.Fatalf("key %s read twice", x.Key)
		}
		m[x.Key] = x
	}
	return m
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// A tagged tasks.json imports every tag by default: master's tasks keep
// their ids, each other tag's are "<tag>:<id>", and a dependency on an id
// its own tag lacks names the task of that id in master, else in the
// first tag holding it (docs/decisions.md D41). In one project every
// dependency is kept; with each tag its own project, one on a task in
// another project is a line of the description, since cairn links tasks
// of one project only.
func TestReadTaskMasterEveryTag(t *testing.T) {
	t.Parallel()
	const file = "testdata/taskmaster/tasks.json"
	type want struct {
		key, project, parent, status, priority string
		deps                                   []string
		elsewhere                              string
	}
	check := func(t *testing.T, ts []Task, wants []want) {
		t.Helper()
		m := byKey(t, ts)
		if len(ts) != len(wants) {
			t.Fatalf("read %d tasks, want %d", len(ts), len(wants))
		}
		for _, c := range wants {
			x, ok := m[c.key]
			if !ok {
				t.Fatalf("task %s not read", c.key)
			}
			if x.Project != c.project || x.Parent != c.parent || x.Status != c.status || str(x.Priority) != c.priority || strings.Join(x.DependsOn, ",") != strings.Join(c.deps, ",") || x.Source != c.key {
				t.Errorf("task %s: %+v", c.key, x)
			}
			_, note, _ := strings.Cut(str(x.Description), TaskMasterOtherTags+"\n\n")
			if note != c.elsewhere {
				t.Errorf("task %s: dependencies elsewhere %q, want %q", c.key, note, c.elsewhere)
			}
		}
	}
	ts, err := Read(file, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, ts, []want{
		{"1", "", "", "done", "high", nil, ""},
		{"1.1", "", "1", "done", "", nil, ""},
		{"1.2", "", "1", "done", "", []string{"1.1"}, ""},
		{"2", "", "", "in_progress", "normal", []string{"1"}, ""},
		{"feature-x:1", "", "", "review", "critical", []string{"2"}, ""},
		{"feature-x:1.1", "", "feature-x:1", "todo", "", []string{"1.2"}, ""},
		{"feature-x:3", "", "", "blocked", "low", []string{"feature-x:1"}, ""},
		{"feature-x:4", "", "", "todo", "", []string{"feature-x:3"}, ""},
		{"Bug_Fixes:1", "", "", "backlog", "", []string{"feature-x:4"}, ""},
		{"Bug_Fixes:2", "", "", "cancelled", "", nil, ""},
		{"Bug_Fixes:3", "", "", "done", "", []string{"Bug_Fixes:2"}, ""},
	})
	m := byKey(t, ts)
	if one := m["1"]; one.SourceCreated != "2025-03-01T09:00:00Z" || one.SourceUpdated != "2025-03-02T10:30:00Z" {
		t.Fatalf("times of task 1: %q %q", one.SourceCreated, one.SourceUpdated)
	}
	if r := m["feature-x:3"].BlockedReason; r == nil || *r != TaskMasterBlockedReason {
		t.Fatalf("blocked reason %v", r)
	}

	ts, err = Read(file, "", Options{TagProjects: true})
	if err != nil {
		t.Fatal(err)
	}
	check(t, ts, []want{
		{"1", "", "", "done", "high", nil, ""},
		{"1.1", "", "1", "done", "", nil, ""},
		{"1.2", "", "1", "done", "", []string{"1.1"}, ""},
		{"2", "", "", "in_progress", "normal", []string{"1"}, ""},
		{"feature-x:1", "feature-x", "", "review", "critical", nil, "- task 2 of tag master"},
		{"feature-x:1.1", "feature-x", "feature-x:1", "todo", "", nil, "- task 1.2 of tag master"},
		{"feature-x:3", "feature-x", "", "blocked", "low", []string{"feature-x:1"}, ""},
		{"feature-x:4", "feature-x", "", "todo", "", []string{"feature-x:3"}, ""},
		{"Bug_Fixes:1", "bug-fixes", "", "backlog", "", nil, "- task 4 of tag feature-x"},
		{"Bug_Fixes:2", "bug-fixes", "", "cancelled", "", nil, ""},
		{"Bug_Fixes:3", "bug-fixes", "", "done", "", []string{"Bug_Fixes:2"}, ""},
	})

	// --tag picks tags, repeatable; a dependency on a tag not read stays
	// its own tag's, for the import to report.
	ts, err = Read(file, "", Options{Tags: []string{"Bug_Fixes", "feature-x"}})
	if err != nil {
		t.Fatal(err)
	}
	m = byKey(t, ts)
	if len(ts) != 7 || strings.Join(m["feature-x:1"].DependsOn, ",") != "feature-x:2" || strings.Join(m["Bug_Fixes:1"].DependsOn, ",") != "feature-x:4" {
		t.Fatalf("two tags: %d tasks, %+v", len(ts), m["feature-x:1"])
	}
	ts, err = Read(file, "", Options{Tags: []string{"feature-x"}, TagProjects: true})
	if err != nil || len(ts) != 4 || strings.Join(ts[0].DependsOn, ",") != "feature-x:2" || ts[0].Project != "feature-x" {
		t.Fatalf("one tag: %v %+v", err, ts)
	}
	_, err = Read(file, "", Options{Tags: []string{"master", "nope"}})
	wantRefusal(t, err, file, 1, "tag")
}

// A key of a tagged file whose value holds no task list is passed over
// when every tag is read, and refused when named.
func TestReadTaskMasterSkipsWhatIsNoTag(t *testing.T) {
	t.Parallel()
	in := `{"master": {"tasks": [{"id": 1, "title": "a"}]}, "$schema": "x", "notes": {"text": 1}}`
	ts, err := ReadTaskMaster("tasks.json", []byte(in), Options{})
	if err != nil || len(ts) != 1 || ts[0].Key != "1" {
		t.Fatalf("%v %+v", err, ts)
	}
	_, err = ReadTaskMaster("tasks.json", []byte(in), Options{Tags: []string{"notes"}})
	wantRefusal(t, err, "tasks.json", 1, "notes.tasks")
	_, err = ReadTaskMaster("tasks.json", []byte(`{"master": {"tasks": [{"id": 1, "title": "a"}]}, "x": {"tasks": [{"id": 1, "title": "b", "dependencies": [true]}]}}`), Options{})
	wantRefusal(t, err, "tasks.json", 1, "dependencies[0]")
}

func TestProjectSlug(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"feature-x":                    "feature-x",
		"Bug_Fixes":                    "bug-fixes",
		"--A  b--":                     "a-b",
		"ünï":                          "n",
		"___":                          "tag",
		strings.Repeat("ab", 40):       strings.Repeat("ab", 31) + "a",
		strings.Repeat("a", 62) + "-b": strings.Repeat("a", 62),
	} {
		if got := ProjectSlug(in); got != want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSourceTime(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2025-06-01T09:00:00Z":        "2025-06-01T09:00:00Z",
		"2025-06-01T11:00:00.5+02:00": "2025-06-01T09:00:00.5Z",
		"2025-06-01T09:00:00":         "2025-06-01T09:00:00Z",
		"2025-06-03 10:00":            "2025-06-03T10:00:00Z",
		"2025-06-03":                  "2025-06-03T00:00:00Z",
		"yesterday":                   "",
		"":                            "",
	} {
		if got := sourceTime(in); got != want {
			t.Errorf("sourceTime(%q) = %q, want %q", in, got, want)
		}
	}
}

// beads: blocks is a dependency, the first parent-child the parent, every
// other link (and a second parent) a line of the description's Links;
// P0..P4 are critical, high, normal, low, low; issue_type but task a
// label.
func TestReadBeads(t *testing.T) {
	t.Parallel()
	ts, err := Read("testdata/beads/issues.jsonl", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dir, err := Read("testdata/beads", "", Options{}); err != nil || len(dir) != len(ts) {
		t.Fatalf("the .beads folder: %d tasks, %v", len(dir), err)
	}
	m := byKey(t, ts)
	for _, c := range []struct {
		key, parent, status, priority, labels, deps string
	}{
		{"bd-a1b2", "", "todo", "high", "import,epic", ""},
		{"bd-c3d4", "bd-a1b2", "in_progress", "critical", "", ""},
		{"bd-e5f6", "bd-a1b2", "blocked", "normal", "feature", "bd-c3d4"},
		{"bd-g7h8", "", "backlog", "low", "bug", ""},
		{"bd-i9j0", "", "done", "low", "chore", ""},
		{"bd-k1l2", "", "todo", "normal", "", ""},
		{"bd-m3n4", "bd-a1b2", "in_progress", "normal", "", "bd-e5f6"},
	} {
		x := m[c.key]
		if x.Parent != c.parent || x.Status != c.status || str(x.Priority) != c.priority || strings.Join(x.Labels, ",") != c.labels || strings.Join(x.DependsOn, ",") != c.deps || x.Source != c.key {
			t.Errorf("issue %s: %+v", c.key, x)
		}
	}
	a := m["bd-a1b2"]
	if str(a.Assignee) != "ann" || a.SourceCreated != "2025-06-01T09:00:00Z" || a.SourceUpdated != "2025-06-02T10:00:00.123456Z" || a.Where.Line != 1 {
		t.Fatalf("bd-a1b2: %+v", a)
	}
	if want := "Everything it takes to move in.\n\n## Design\n\nReaders per format.\n\n## Acceptance criteria\n\nEvery format imports.\n\n## Notes\n\nStart with beads.\n\n## Comments\n\n- **bob 2025-06-01T10:00:00Z**: Looks good."; str(a.Description) != want {
		t.Fatalf("bd-a1b2 description %q", str(a.Description))
	}
	if d := str(m["bd-g7h8"].Description); d != "## Links\n\n- discovered-from: bd-e5f6\n- related: bd-c3d4" {
		t.Fatalf("bd-g7h8 description %q", d)
	}
	if d := str(m["bd-i9j0"].Description); d != "## Close reason\n\nReplaced by the new reader" {
		t.Fatalf("bd-i9j0 description %q", d)
	}
	if e := m["bd-c3d4"].EstimateHours; e == nil || *e != 1.5 {
		t.Fatalf("bd-c3d4 estimate %v", e)
	}
	if r := m["bd-e5f6"].BlockedReason; r == nil || *r != BeadsBlockedReason {
		t.Fatalf("bd-e5f6 blocked reason %v", r)
	}
	// A second parent is a link; a tombstone is cancelled; an unknown
	// dependency type is a link.
	ts, err = ReadBeads("i.jsonl", strings.NewReader(`{"id":"x-1","title":"a","status":"tombstone","dependencies":[{"depends_on_id":"x-2","type":"parent-child"},{"depends_on_id":"x-3","type":"parent-child"},{"depends_on_id":"x-4","type":"waits-for"}]}`))
	if err != nil || ts[0].Parent != "x-2" || ts[0].Status != "cancelled" || str(ts[0].Description) != "## Links\n\n- parent-child: x-3\n- waits-for: x-4" {
		t.Fatalf("%v %+v", err, ts)
	}
	for _, c := range []struct {
		name, in string
		line     int
		field    string
	}{
		{"no id", `{"title":"a"}`, 1, "id"},
		{"no title", "\n" + `{"id":"x-1"}`, 2, "title"},
		{"bad status", `{"id":"x-1","title":"a","status":"done"}`, 1, "status"},
		{"priority out of range", `{"id":"x-1","title":"a","priority":5}`, 1, "priority"},
		{"priority not whole", `{"id":"x-1","title":"a","priority":1.5}`, 1, "priority"},
		{"priority a string", `{"id":"x-1","title":"a","priority":"P1"}`, 1, "priority"},
		{"labels not a list", `{"id":"x-1","title":"a","labels":"x"}`, 1, "labels"},
		{"dependency on nothing", `{"id":"x-1","title":"a","dependencies":[{"type":"blocks"}]}`, 1, "dependencies[0].depends_on_id"},
		{"dependency of another issue", `{"id":"x-1","title":"a","dependencies":[{"issue_id":"x-9","depends_on_id":"x-2"}]}`, 1, "dependencies[0].issue_id"},
		{"not JSON", `{"id":`, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, err := ReadBeads("i.jsonl", strings.NewReader(c.in))
			if ts != nil {
				t.Fatalf("tasks beside an error: %v", ts)
			}
			wantRefusal(t, err, "i.jsonl", c.line, c.field)
		})
	}
}

// Claude Code: blockedBy is what a task waits on; blocks is its inverse,
// and an import takes the union of both.
func TestReadClaude(t *testing.T) {
	t.Parallel()
	ts, err := ReadClaude("testdata/claude/list", "list")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, x := range ts {
		keys = append(keys, x.Key)
	}
	if strings.Join(keys, ",") != "1,2,3,4,10" {
		t.Fatalf("keys %v", keys)
	}
	m := byKey(t, ts)
	for _, c := range []struct{ key, status, deps string }{
		{"1", "done", ""},
		{"2", "in_progress", "1"},
		{"3", "todo", "1"},
		{"4", "todo", "2,3"},
		{"10", "todo", "4,3"},
	} {
		x := m[c.key]
		if x.Status != c.status || strings.Join(x.DependsOn, ",") != c.deps || x.Source != c.key || x.Where.File != "list/"+c.key+".json" {
			t.Errorf("task %s: %+v", c.key, x)
		}
	}
	if a := m["2"]; str(a.Assignee) != "agent-7" || a.Title != "Map blocks and blockedBy" || str(a.Description) != "blockedBy is what the task waits on." {
		t.Fatalf("task 2: %+v", a)
	}
	if d := str(m["3"].Description); d != "## Metadata\n\n```json\n{\"area\":\"import\",\"points\":3}\n```" {
		t.Fatalf("task 3 description %q", d)
	}
	for _, c := range []struct {
		name, in, field string
	}{
		{"no id", `{"subject":"a"}`, "id"},
		{"no subject", `{"id":"1"}`, "subject"},
		{"bad status", `{"id":"1","subject":"a","status":"done"}`, "status"},
		{"blockedBy not ids", `{"id":"1","subject":"a","blockedBy":[{}]}`, "blockedBy[0]"},
		{"blocks not ids", `{"id":"1","subject":"a","blocks":[true]}`, "blocks[0]"},
		{"subject a number", `{"id":"1","subject":3}`, "subject"},
		{"not JSON", `{"id":`, ""},
		{"two values", `{"id":"1","subject":"a"} {}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseClaudeFile("list/1.json", []byte(c.in))
			wantRefusal(t, err, "list/1.json", 0, c.field)
		})
	}
	bad := writeFiles(t, map[string]string{"1.json": `{"id":"1","subject":"a"}`, "2.json": `{"id":"2"}`})
	if ts, err := ReadClaude(bad, "l"); ts != nil || err == nil {
		t.Fatalf("one bad file: %v %v", ts, err)
	} else {
		wantRefusal(t, err, "l/2.json", 0, "subject")
	}
}

func TestDetectFormat(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"cairn.jsonl":           `{"task_id":"T-1","title":"a"}` + "\n",
		"beads.jsonl":           "\n" + `{"id":"bd-1","title":"a"}` + "\n",
		".beads/issues.jsonl":   `{"task_id":"T-1","title":"a"}` + "\n",
		"tasks.json":            `{"tasks":[]}`,
		"notes.txt":             "",
		"claude/1.json":         `{"id":"1","subject":"a"}`,
		"claude/.lock":          "",
		"board/tasks/task-1.md": "---\nid: task-1\n---\n",
		"flat/task-1 - a.md":    "---\nid: task-1\n---\n",
		"mixed/1.json":          "{}",
		"mixed/task-1 - a.md":   "",
	})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"cairn.jsonl":         FormatJSONL,
		"beads.jsonl":         FormatBeads,
		".beads/issues.jsonl": FormatBeads,
		".beads":              FormatBeads,
		"tasks.json":          FormatTaskMaster,
		"notes.txt":           "",
		"claude":              FormatClaude,
		"board":               FormatBacklog,
		"flat":                FormatBacklog,
		"mixed":               FormatBacklog,
		"empty":               FormatBacklog,
	} {
		if got := DetectFormat(filepath.Join(dir, name)); got != want {
			t.Errorf("DetectFormat(%s) = %q, want %q", name, got, want)
		}
	}
}
