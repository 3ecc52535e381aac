package importer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// decisions/ holds decision records, not tasks: they are read on their own
// (ReadBacklogDecisions), and the board yields the Decisions task that
// holds them after its tasks.
func TestReadBacklogDecisions(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", DecisionPart+10)
	dir := writeFiles(t, map[string]string{
		"tasks/task-1 - a.md":               "---\nid: task-1\ntitle: a\n---\n",
		"decisions/decision-10 - Later.md":  "---\nid: decision-10\ntitle: Later\n---\n" + long,
		"decisions/decision-2 - Use-Go.md":  "---\nid: decision-2\ntitle: Use Go\ndate: '2025-06-22'\nstatus: accepted\n---\n## Context\n\nSpeed.\n",
		"decisions/decision-3 - Nothing.md": "---\nid: decision-3\ntitle: Nothing\n---\n",
		"decisions/readme.md":               "# Decisions\n",
	})
	ts, err := ReadBacklog(dir, "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[1].Key != DecisionsKey || ts[1].Title != DecisionsTitle || ts[1].Labels[0] != DecisionsLabel || ts[1].Status != "done" {
		t.Fatalf("tasks %+v", ts)
	}
	ds, err := ReadBacklogDecisions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 || ds[0].ID != "decision-2" || ds[1].ID != "decision-3" || ds[2].ID != "decision-10" {
		t.Fatalf("decisions %+v", ds)
	}
	if d := ds[0]; d.Title != "Use Go" || d.Date != "2025-06-22" || d.Status != "accepted" || d.Body != "## Context\n\nSpeed.\n" || !strings.HasSuffix(d.Where.File, "/decisions/decision-2 - Use-Go.md") {
		t.Fatalf("decision-2 %+v", d)
	}
	if p := ds[1].Parts(); len(p) != 1 || p[0] != "Nothing" {
		t.Fatalf("an empty decision is one record holding its title: %q", p)
	}
	parts := ds[2].Parts()
	if len(parts) != 2 || utf8.RuneCountInString(parts[0]) != DecisionPart || parts[0]+parts[1] != long {
		t.Fatalf("a long decision is cut into records that hold it whole: %d parts", len(parts))
	}

	none, err := ReadBacklog(writeFiles(t, map[string]string{"tasks/task-1 - a.md": "---\nid: task-1\ntitle: a\n---\n", "decisions/readme.md": "x"}), "b")
	if err != nil || len(none) != 1 {
		t.Fatalf("a board without decisions has no Decisions task: %+v %v", none, err)
	}
	for _, c := range []struct {
		name, data string
		line       int
		field      string
	}{
		{"no title", "---\nid: decision-1\n---\n", 1, "title"},
		{"bad id", "---\nid: task-1\ntitle: a\n---\n", 2, "id"},
		{"date a list", "---\nid: decision-1\ntitle: a\ndate: [1]\n---\n", 4, "date"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadBacklogDecisions(writeFiles(t, map[string]string{"decisions/decision-1 - a.md": c.data}))
			if err == nil {
				t.Fatal("accepted")
			}
			e := err.Error()
			if !strings.Contains(e, "decision-1 - a.md") || !strings.Contains(e, "field "+c.field) {
				t.Fatalf("refusal %v", err)
			}
		})
	}
}
