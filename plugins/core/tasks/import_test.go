package tasks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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
	t.Parallel()
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

// changingSource yields n tasks, and on its second reading changes task
// at: its key (key) or its dependencies (deps).
type changingSource struct {
	n, at int
	reads int
	key   bool
	// skip: task at reads as an item its reader could not read.
	skip bool
}

func (c *changingSource) Scan(yield func(importer.Task) error) error {
	c.reads++
	for i := range c.n {
		t := importer.Task{Key: fmt.Sprintf("k%d", i), Where: at(i + 1), Title: "t"}
		if i > 0 {
			t.DependsOn = []string{fmt.Sprintf("k%d", i-1)}
		}
		if c.reads > 1 && i == c.at {
			if c.skip {
				t = importer.Task{Key: t.Key, Where: t.Where, Skip: importer.Refuse(t.Where, "title", "type", "title must be a string")}
			} else if c.key {
				t.Key = "other"
			} else {
				t.DependsOn = []string{"k0"}
			}
		}
		if err := yield(t); err != nil {
			return err
		}
	}
	return nil
}

// A lenient import whose second reading skips an item the first read
// (a reader's mend or skip must be the same each time) is refused.
func TestImportRefusesASkipTheFirstPassDidNotMake(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "imp")
	_, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", &changingSource{n: 10, at: 6, skip: true}, ImportOptions{}, nil)
	e := wantErr(t, err, 400, errs.InvalidInput, "path", "stable")
	if e.Details["line"] != 7 {
		t.Fatalf("refused at %v, want line 7: %s", e.Details, e.Message)
	}
	if n := countTasks(t, f.st); n != 0 {
		t.Fatalf("a refused import wrote %d tasks", n)
	}
}

// An input that reads differently the second time (docs/decisions.md D41
// reads it twice) is refused naming where, after some of its tasks were
// staged, and leaves nothing: no task, no journal.
func TestImportRefusesAnInputThatChanged(t *testing.T) {
	t.Parallel()
	for _, key := range []bool{true, false} {
		f := newFixture(t, "imp")
		src := &changingSource{n: 2500, at: 1700, key: key}
		_, err := f.svc.ImportFrom(Call{Actor: "op"}, "imp", src, ImportOptions{Strict: true}, nil)
		e := wantErr(t, err, 400, errs.InvalidInput, "path", "stable")
		if e.Details["line"] != 1701 {
			t.Fatalf("refused at %v, want line 1701: %s", e.Details, e.Message)
		}
		if n := countTasks(t, f.st); n != 0 {
			t.Fatalf("a refused import wrote %d tasks", n)
		}
		if h := journalOf(t, f); h != nil {
			t.Fatalf("the refused import left its journal: %+v", *h)
		}
		if _, err := f.svc.Import(Call{Actor: "op"}, "imp", []importer.Task{{Key: "a", Where: at(1), Title: "a"}}); err != nil {
			t.Fatalf("an import after the refused one: %v", err)
		}
	}
}

func journalOf(t *testing.T, f *fixture) *importHead {
	t.Helper()
	var h *importHead
	if err := f.st.View(func(tx kv.Tx) error {
		var err error
		h, err = readHead(tx.Bucket(bucketJournal))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// putJournal writes head and the plan entries ('t' or 'p' keys) as an
// import, or an older cairn's, would have left them.
func putJournal(t *testing.T, f *fixture, head importHead, entries map[string][]byte) {
	t.Helper()
	if err := f.st.Update(func(tx kv.Tx) error {
		j := tx.Bucket(bucketJournal)
		for k, v := range entries {
			if err := j.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return putHead(j, head)
	}); err != nil {
		t.Fatal(err)
	}
}

// A journal still being staged is an import that never started: another
// import is refused beside it while it makes progress, takes it over once
// it has stalled for importStagingStale, and the next open of a bbolt
// store (one process only) clears it.
func TestImportStagingJournal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "imp")
	f.clock.freeze()
	now := f.clock.now()
	staged := func(touched time.Time) importHead {
		return importHead{ID: "x", Project: "imp", Actor: "op", Total: 5, Batch: ImportBatch, Format: journalPerTask, Staging: true, Touched: touched.Format(time.RFC3339Nano)}
	}
	one := []importer.Task{{Key: "a", Where: at(1), Title: "a"}}
	putJournal(t, f, staged(now.Add(-time.Minute)), map[string][]byte{string(journalKey('t', 0)): []byte(`{}`)})
	_, err := f.svc.Import(Call{Actor: "op"}, "imp", one)
	wantErr(t, err, 409, errs.Conflict, "tasks", "")
	putJournal(t, f, staged(now.Add(-importStagingStale-time.Second)), nil)
	if _, err := f.svc.Import(Call{Actor: "op"}, "imp", one); err != nil {
		t.Fatalf("an import beside a stalled staging: %v", err)
	}
	if h := journalOf(t, f); h != nil {
		t.Fatalf("journal after the import: %+v", *h)
	}

	putJournal(t, f, staged(now), map[string][]byte{string(journalKey('t', 0)): []byte(`{}`)})
	if n, err := f.svc.ResumeImport(); n != 0 || err != nil {
		t.Fatalf("resume of a staging journal: %d %v", n, err)
	}
	if f.st.Describe().Kind == "postgres" {
		return // shared: kept until it stalls
	}
	if h := journalOf(t, f); h != nil {
		t.Fatalf("the staging journal is still there after an open: %+v", *h)
	}
	if n := countTasks(t, f.st); n != 1 {
		t.Fatalf("%d tasks, want the one imported", n)
	}
}

// A journal an older cairn left (its plan in chunks of ImportBatch tasks
// under 'p') is completed as it was written.
func TestResumeImportOfAnOlderJournal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "imp")
	todo := StatusTodo
	chunk, err := json.Marshal([]planned{
		{In: CreateInput{Title: "first", Project: "imp"}, Parent: -1, Key: "a"},
		{In: CreateInput{Title: "second", Project: "imp"}, Parent: 0, Deps: []int{0}, Steps: []UpdateInput{{Status: &todo}}, Key: "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	putJournal(t, f, importHead{Project: "imp", Actor: "op", Total: 2, Batch: ImportBatch}, map[string][]byte{string(journalKey('p', 0)): chunk})
	if n, err := f.svc.ResumeImport(); n != 2 || err != nil {
		t.Fatalf("resumed %d tasks: %v", n, err)
	}
	got, err := f.svc.Get(GetInput{TaskID: FormatTaskID(2)})
	if err != nil || got.Title != "second" || got.Status != StatusTodo || got.ParentID != FormatTaskID(1) {
		t.Fatalf("the second task: %+v %v", got, err)
	}
	if h := journalOf(t, f); h != nil {
		t.Fatalf("journal after the resume: %+v", *h)
	}
}
