package tasks

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// task_update renames a task (the dashboard's edit form, docs/decisions.md
// D45): task_get and the search see the new title, the change is an
// event of its own, and a blank or overlong title is refused naming title.
func TestUpdateRenamesATask(t *testing.T) { pgtest.EachStore(t, testUpdateRenamesATask) }

func testUpdateRenamesATask(t *testing.T) {
	f := newFixture(t, "alpha")
	id := f.create(t, CreateInput{Title: "Draft the wombat report", Project: "alpha"}).TaskID
	f.takeEvents()
	f.update(t, UpdateInput{TaskID: id, Title: ptr("Publish the quokka report")})
	if g := f.get(t, id); g.Title != "Publish the quokka report" {
		t.Fatalf("task_get title %q", g.Title)
	}
	ev := f.takeEvents()
	if len(ev) == 0 || !slices.Contains(ev[0].data["changed_fields"].([]string), "title") {
		t.Fatalf("events %+v lack the title change", ev)
	}
	for word, want := range map[string]int{"quokka": 1, "wombat": 0} {
		l, err := f.svc.List(ListInput{Project: ptr("alpha"), Search: ptr(word)})
		if err != nil || len(l.Tasks) != want {
			t.Fatalf("search %q: %d tasks, want %d (%v)", word, len(l.Tasks), want, err)
		}
	}
	for _, bad := range []struct{ title, rule string }{
		{"   ", "minLength"},
		{"", "minLength"},
		{strings.Repeat("x", MaxTitleLen+1), "maxLength"},
	} {
		_, err := f.svc.Update("agent-2", UpdateInput{TaskID: id, Title: ptr(bad.title)})
		var e *errs.Error
		if !errors.As(err, &e) || e.Details["field"] != "title" || e.Details["constraint"] != bad.rule {
			t.Fatalf("title %.10q: %v, want a refusal naming title and %s", bad.title, err, bad.rule)
		}
	}
}
