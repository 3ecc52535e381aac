package backlogmd

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileIsBacklogMarkdownWithSortedKeys(t *testing.T) {
	t.Parallel()
	est := 2.5
	got := string(File(Task{
		TaskID: "T-12", Title: "Ship: it", Description: "  two\nlines ", ParentID: "T-3", Status: "blocked",
		Priority: "normal", Progress: 40, Assignee: "ann", Labels: []string{"cli", "a b"}, EstimateHours: &est,
		BlockedReason: "waits", DependsOn: []string{"T-1", "T-2"}, Source: "back-222.1", SourceCreated: "2025-06-03T14:30:00Z",
	}))
	want := "---\nassignee: [ann]\nblocked_reason: waits\ncreated_date: \"2025-06-03T14:30:00Z\"\ndependencies: [T-1, T-2]\n" +
		"estimate_hours: 2.5\nid: T-12\nlabels: [cli, a b]\nparent_task_id: T-3\npriority: medium\nprogress: 40\n" +
		"source_id: back-222.1\nstatus: Blocked\ntitle: 'Ship: it'\n---\n\n" +
		"## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\n  two\nlines \n<!-- SECTION:DESCRIPTION:END -->\n"
	if got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	plain := string(File(Task{TaskID: "T-1", Title: "a", Status: "done", Priority: "low", Assignee: "unassigned", Source: "T-1"}))
	if plain != "---\nassignee: []\ndependencies: []\nid: T-1\nlabels: []\npriority: low\nstatus: Done\ntitle: a\n---\n" {
		t.Fatalf("plain file:\n%s", plain)
	}
}

func TestPathsFollowBacklogMd(t *testing.T) {
	t.Parallel()
	long := ""
	for range 100 {
		long += "é"
	}
	for _, c := range []struct{ id, title, status, want string }{
		{"T-12", "Fix: the <parser> (now)!", "todo", "tasks/t-12 - Fix-the-parser-now.md"},
		{"T-3", "a/b\\c", "done", "completed/t-3 - a-b-c.md"},
		{"T-4", "???", "cancelled", "archive/tasks/t-4.md"},
		{"T-5", long, "backlog", "tasks/t-5 - " + long[:120] + ".md"},
	} {
		if got := Path(Task{TaskID: c.id, Title: c.title, Status: c.status}); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.id, c.title, got, c.want)
		}
	}
}

func TestSyncWritesChangesAndRemovesMovedFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tasks"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Files not cairn's own stay.
	keep := filepath.Join(dir, "tasks", "readme.md")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "tasks", "t-9 - gone.md")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := Build("demo", []Task{{TaskID: "T-1", Title: "a", Status: "todo"}, {TaskID: "T-2", Title: "b", Status: "todo"}}, nil)
	if w, r, err := Sync(dir, one, nil); err != nil || w != 3 || r != 1 {
		t.Fatalf("first sync: %d written %d removed %v", w, r, err)
	}
	two := Build("demo", []Task{{TaskID: "T-1", Title: "a", Status: "done"}, {TaskID: "T-2", Title: "b", Status: "todo"}}, nil)
	if w, r, err := Sync(dir, two, one); err != nil || w != 1 || r != 1 {
		t.Fatalf("second sync: %d written %d removed %v", w, r, err)
	}
	for name, want := range two {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %q %v", name, got, err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "tasks", "t-1 - a.md"), stale} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s should be gone: %v", p, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal(err)
	}
	// A first sync over a current folder writes nothing.
	if w, r, err := Sync(dir, two, nil); err != nil || w != 0 || r != 0 {
		t.Fatalf("sync of a current folder: %d written %d removed %v", w, r, err)
	}
}

// The records of an imported decision make its file again; a record
// recorded in cairn makes a file of its own; the task holding them has no
// task file.
func TestDecisionsFromRecords(t *testing.T) {
	t.Parallel()
	meta := func(id, title string, part, parts int, empty bool) []byte {
		return []byte(`{"backlog_decision":{"id":"` + id + `","title":"` + title + `","date":"2025-06-22","part":` + string(rune('0'+part)) + `,"parts":` + string(rune('0'+parts)) + `,"empty":` + map[bool]string{true: "true", false: "false"}[empty] + `}}`)
	}
	board := Build("demo", []Task{
		{TaskID: "T-1", Title: "a", Status: "todo"},
		{TaskID: "T-2", Title: "Decisions", Status: "done", Labels: []string{DecisionsLabel}},
	}, []Record{
		{Content: "second half\n", ChainPosition: 2, Metadata: meta("decision-4", "Split", 2, 2, false)},
		{Content: "## Context\nfirst half, ", ChainPosition: 1, Metadata: meta("decision-4", "Split", 1, 2, false)},
		{Content: "Empty", ChainPosition: 3, Metadata: meta("decision-5", "Empty", 1, 1, true)},
		{Content: "# Keep logs\nFor a year.", ChainPosition: 4},
	})
	want := map[string]string{
		"decisions/decision-4 - Split.md":     "---\ndate: \"2025-06-22\"\nid: decision-4\ntitle: Split\n---\n## Context\nfirst half, second half\n",
		"decisions/decision-5 - Empty.md":     "---\ndate: \"2025-06-22\"\nid: decision-5\ntitle: Empty\n---\n",
		"decisions/decision-6 - Keep-logs.md": "---\nid: decision-6\ntitle: Keep logs\n---\n# Keep logs\nFor a year.",
	}
	for name, data := range want {
		if got := string(board[name]); got != data {
			t.Errorf("%s:\n%q\nwant\n%q", name, got, data)
		}
	}
	if len(board) != len(want)+2 {
		t.Fatalf("board %v", keys(board))
	}
}

func keys(b Board) []string {
	var out []string
	for k := range b {
		out = append(out, k)
	}
	return out
}
