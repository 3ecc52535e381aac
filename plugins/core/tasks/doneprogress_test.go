package tasks

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// A task moved to done shows progress 100 (docs/decisions.md D8), in the
// update's answer, task_get and task_list; a progress sent with the move is
// overridden with a warning.
func TestDoneShowsFullProgress(t *testing.T) { pgtest.EachStore(t, testDoneShowsFullProgress) }

func testDoneShowsFullProgress(t *testing.T) {
	cases := []struct {
		name     string
		progress *float64 // sent with the move to done
		warn     bool
	}{
		{name: "plain move"},
		{name: "progress 40 sent", progress: ptr(40.0), warn: true},
		{name: "progress 100 sent", progress: ptr(100.0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "alpha")
			id := f.taskIn(t, "alpha", StatusReview)
			f.update(t, UpdateInput{TaskID: id, Progress: ptr(60.0)})
			f.takeEvents()
			out := f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusDone), Progress: c.progress})
			if out.Progress != MaxProgress || out.Status != StatusDone {
				t.Fatalf("move to done: %+v", out)
			}
			warned := slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "progress 40 ignored") })
			if warned != c.warn {
				t.Fatalf("warnings %v, want the progress warning: %v", out.Warnings, c.warn)
			}
			ev := f.takeEvents()
			if len(ev) == 0 || !slices.Contains(ev[0].data["changed_fields"].([]string), "progress") {
				t.Fatalf("events %+v lack the progress change", ev)
			}
			if g := f.get(t, id); g.Progress != MaxProgress {
				t.Fatalf("task_get progress %v", g.Progress)
			}
			l, err := f.svc.List(ListInput{Project: ptr("alpha")})
			if err != nil || len(l.Tasks) != 1 || l.Tasks[0].Progress != MaxProgress {
				t.Fatalf("task_list %+v %v", l, err)
			}
		})
	}
}

// A done task stored before moves set 100 still shows 100.
func TestStoredDoneTaskShowsFullProgress(t *testing.T) {
	pgtest.EachStore(t, testStoredDoneTaskShowsFullProgress)
}

func testStoredDoneTaskShowsFullProgress(t *testing.T) {
	f := newFixture(t, "alpha")
	id := f.taskIn(t, "alpha", StatusDone)
	num, _ := ParseTaskID(id)
	err := f.st.Commit(func(tx kv.Tx) error {
		prev, _, err := loadRecord(tx, num)
		if err != nil {
			return err
		}
		rec := *prev
		rec.progress = 60 // as an older cairn left it
		_, err = putRecord(tx, &rec, prev)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := f.get(t, id); g.Progress != MaxProgress {
		t.Fatalf("task_get progress %v", g.Progress)
	}
	l, err := f.svc.List(ListInput{Project: ptr("alpha")})
	if err != nil || len(l.Tasks) != 1 || l.Tasks[0].Progress != MaxProgress {
		t.Fatalf("task_list %+v %v", l, err)
	}
}
