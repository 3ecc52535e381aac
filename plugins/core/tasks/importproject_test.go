package tasks

import (
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A task an import reads with a project of its own (a task-master tag's)
// goes to that project, registered when new; a link across projects, or
// an archived project, refuses the import before anything is written
// (docs/decisions.md D41).
func TestImportTasksOfOtherProjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "imp")
	in := []importer.Task{
		{Key: "1", Where: at(1), Title: "in imp"},
		{Key: "x:1", Where: at(2), Title: "in feature-x", Project: "feature-x"},
		{Key: "x:1.1", Where: at(3), Title: "sub in feature-x", Project: "feature-x", Parent: "x:1", DependsOn: []string{"x:2"}},
		{Key: "b:1", Where: at(4), Title: "in bugs", Project: "bugs"},
		{Key: "2", Where: at(5), Title: "imp again", Project: "imp", DependsOn: []string{"1"}},
		{Key: "x:2", Where: at(6), Title: "later in feature-x", Project: "feature-x"},
	}
	out, err := f.svc.Import(Call{Actor: "op"}, "imp", in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Imported != 6 || !slices.Equal(out.Projects, []string{"feature-x", "bugs"}) {
		t.Fatalf("answer %+v", out)
	}
	want := map[string]string{"1": "imp", "x:1": "feature-x", "x:1.1": "feature-x", "b:1": "bugs", "2": "imp", "x:2": "feature-x"}
	for key, project := range want {
		got, err := f.svc.Get(GetInput{TaskID: out.IDs[key]})
		if err != nil {
			t.Fatal(err)
		}
		if got.Project != project {
			t.Fatalf("task %s is in %s, want %s", key, got.Project, project)
		}
	}
	sub, _ := f.svc.Get(GetInput{TaskID: out.IDs["x:1.1"]})
	if !slices.Equal(sub.DependsOn, []string{out.IDs["x:2"]}) || sub.ParentID != out.IDs["x:1"] {
		t.Fatalf("x:1.1: %+v", sub)
	}
	ps, err := f.svc.ListProjects()
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, p := range ps {
		slugs = append(slugs, p.Slug)
	}
	for _, s := range []string{"imp", "feature-x", "bugs"} {
		if !slices.Contains(slugs, s) {
			t.Fatalf("project %s not registered: %v", s, slugs)
		}
	}

	for _, c := range []struct {
		name  string
		in    []importer.Task
		field string
	}{
		{"dependency", []importer.Task{{Key: "1", Where: at(1), Title: "a"}, {Key: "y:1", Where: at(2), Title: "b", Project: "other", DependsOn: []string{"1"}}}, "depends_on"},
		{"parent", []importer.Task{{Key: "y:1", Where: at(1), Title: "a", Project: "other", Parent: "2"}, {Key: "2", Where: at(2), Title: "b"}}, "parent_id"},
	} {
		_, err := f.svc.Import(Call{Actor: "op"}, "imp", c.in)
		if e := wantErr(t, err, 400, errs.InvalidInput, c.field, ""); e.Details["constraint"] != "sameProject" {
			t.Fatalf("%s across projects: %v", c.name, e)
		}
	}
	if _, err := f.svc.SetProjectArchived("bugs", true); err != nil {
		t.Fatal(err)
	}
	before, _ := f.svc.ListProjects()
	_, err = f.svc.Import(Call{Actor: "op"}, "imp", []importer.Task{{Key: "1", Where: at(1), Title: "a"}, {Key: "b:1", Where: at(2), Title: "b", Project: "bugs"}})
	wantErr(t, err, 409, errs.Conflict, "project", "")
	_, err = f.svc.Import(Call{Actor: "op"}, "imp", []importer.Task{{Key: "1", Where: at(1), Title: "a", Project: "Not A Slug"}})
	wantErr(t, err, 400, errs.InvalidInput, "project", "")
	if after, _ := f.svc.ListProjects(); len(after) != len(before) {
		t.Fatalf("a refused import registered projects: %v", after)
	}
}

// projectFlip yields tasks of two projects and, on its second reading,
// moves the last task to the other project, where its dependency is not.
type projectFlip struct{ reads int }

func (p *projectFlip) Scan(yield func(importer.Task) error) error {
	p.reads++
	last := "b"
	if p.reads > 1 {
		last = "a"
	}
	for _, t := range []importer.Task{
		{Key: "a:1", Where: at(1), Title: "a", Project: "a"},
		{Key: "b:1", Where: at(2), Title: "b", Project: "b"},
		{Key: "b:2", Where: at(3), Title: "c", Project: last, DependsOn: []string{"b:1"}},
	} {
		if err := yield(t); err != nil {
			return err
		}
	}
	return nil
}

// A task whose project differs on the second reading is refused as an
// input that changed: the link checked in one project would otherwise
// cross two, which only the writing would find.
func TestImportRefusesATaskThatChangedProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "imp")
	_, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", &projectFlip{}, ImportOptions{Strict: true}, nil)
	if e := wantErr(t, err, 400, errs.InvalidInput, "path", "stable"); e.Details["line"] != 3 {
		t.Fatalf("refused at %v: %s", e.Details, e.Message)
	}
	if n := countTasks(t, f.st); n != 0 {
		t.Fatalf("a refused import wrote %d tasks", n)
	}
	if h := journalOf(t, f); h != nil {
		t.Fatalf("the refused import left its journal: %+v", *h)
	}
}
