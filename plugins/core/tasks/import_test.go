package tasks

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func at(line int) importer.Where { return importer.Where{File: "in.jsonl", Line: line} }

// A problem anywhere in an import is refused before anything is written,
// naming the line and the field, with task_create's and task_update's
// own rules.
func TestImportRefusesBeforeWriting(t *testing.T) {
	ok := func(key string, line int) importer.Task {
		return importer.Task{Key: key, Where: at(line), Title: "t " + key}
	}
	with := func(t importer.Task, f func(*importer.Task)) importer.Task { f(&t); return t }
	long := strings.Repeat("x", MaxTitleLen+1)
	for _, c := range []struct {
		name   string
		in     []importer.Task
		status int
		code   string
		line   int
		field  string
	}{
		{"duplicate id", []importer.Task{ok("a", 1), ok("a", 2)}, 400, errs.InvalidInput, 2, "task_id"},
		{"title too long", []importer.Task{ok("a", 1), with(ok("b", 2), func(t *importer.Task) { t.Title = long })}, 400, errs.InvalidInput, 2, "title"},
		{"unknown parent", []importer.Task{with(ok("a", 1), func(t *importer.Task) { t.Parent = "zz" })}, 400, errs.InvalidInput, 1, "parent_id"},
		{"unknown dependency", []importer.Task{ok("a", 1), with(ok("b", 7), func(t *importer.Task) { t.DependsOn = []string{"a", "q"} })}, 400, errs.InvalidInput, 7, "depends_on"},
		{"bad status", []importer.Task{with(ok("a", 3), func(t *importer.Task) { t.Status = "finished" })}, 400, errs.InvalidInput, 3, "status"},
		{"blocked without reason", []importer.Task{with(ok("a", 4), func(t *importer.Task) { t.Status = StatusBlocked })}, 400, errs.InvalidInput, 4, "blocked_reason"},
		{"progress over 100", []importer.Task{with(ok("a", 5), func(t *importer.Task) { t.Progress = ptr(101.0) })}, 400, errs.InvalidInput, 5, "progress"},
		{"too many labels", []importer.Task{with(ok("a", 6), func(t *importer.Task) { t.Labels = make([]string, MaxLabels+1) })}, 400, errs.InvalidInput, 6, "labels"},
		{"dependency loop", []importer.Task{
			with(ok("a", 1), func(t *importer.Task) { t.DependsOn = []string{"c"} }),
			with(ok("b", 2), func(t *importer.Task) { t.DependsOn = []string{"a"} }),
			with(ok("c", 3), func(t *importer.Task) { t.DependsOn = []string{"b"} }),
		}, 409, errs.CircularDependency, 2, "depends_on"}, // b's depends_on closes it
		{"parent loop", []importer.Task{
			with(ok("a", 1), func(t *importer.Task) { t.Parent = "b" }),
			with(ok("b", 2), func(t *importer.Task) { t.Parent = "a" }),
		}, 409, errs.CircularDependency, 2, "depends_on"},
		{"self dependency", []importer.Task{with(ok("a", 9), func(t *importer.Task) { t.DependsOn = []string{"a"} })}, 409, errs.CircularDependency, 9, "depends_on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "imp")
			_, err := f.svc.Import(Call{Actor: "op"}, "imp", c.in)
			e := wantErr(t, err, c.status, c.code, c.field, "")
			if e.Details["line"] != c.line || e.Details["file"] != "in.jsonl" || !strings.Contains(e.Message, "in.jsonl line") {
				t.Fatalf("want line %d of in.jsonl, got %v: %s", c.line, e.Details, e.Message)
			}
			if n := countTasks(t, f.st); n != 0 {
				t.Fatalf("a refused import wrote %d tasks", n)
			}
		})
	}
	f := newFixture(t)
	if _, err := f.svc.Import(Call{Actor: "op"}, "nowhere", []importer.Task{ok("a", 1)}); err == nil {
		t.Fatal("an import into an unregistered project ran")
	} else {
		wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
	}
	if n := countTasks(t, f.st); n != 0 {
		t.Fatalf("a refused import wrote %d tasks", n)
	}
}

func countTasks(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx kv.Tx) error {
		return tx.Bucket([]byte(store.BucketTasks)).ForEach(func(_, _ []byte) error { n++; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
