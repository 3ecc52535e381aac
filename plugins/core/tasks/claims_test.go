package tasks

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"slices"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func claimAs(f *fixture, actor, id string) (UpdateOutput, error) {
	return f.svc.UpdateFor(Call{Actor: actor}, UpdateInput{TaskID: id, Claim: ptr(true)})
}

// Claim and release rules of task_update, each with its error.
func TestClaimAndRelease(t *testing.T) { pgtest.EachStore(t, testClaimAndRelease) }

func testClaimAndRelease(t *testing.T) {
	f := newFixture(t, "alpha")
	id := f.taskIn(t, "alpha", StatusTodo)
	f.takeEvents()
	out, err := claimAs(f, "ann", id)
	if err != nil || out.Status != StatusInProgress || out.ClaimedBy != "ann" || out.PreviousStatus != StatusTodo {
		t.Fatalf("claim: %+v %v", out, err)
	}
	if g := f.get(t, id); g.Assignee != "ann" || g.ClaimedBy != "ann" {
		t.Fatalf("claimed task %+v", g)
	}
	ev := f.takeEvents()
	if len(ev) != 2 || ev[0].typ != EventUpdated || ev[1].typ != EventClaimed || ev[1].data["claimed_by"] != "ann" {
		t.Fatalf("claim events %+v", ev)
	}
	// The holder claiming again: a no-op. Another caller: 409 naming ann.
	if again, err := claimAs(f, "ann", id); err != nil || again.ClaimedBy != "ann" {
		t.Fatalf("re-claim %+v %v", again, err)
	}
	_, err = claimAs(f, "bob", id)
	if e := wantErr(t, err, 409, errs.Conflict, "", ""); e.Details["holder"] != "ann" {
		t.Fatalf("details %v", e.Details)
	}
	// Release: only the holder; back to todo, unassigned.
	_, err = f.svc.UpdateFor(Call{Actor: "bob"}, UpdateInput{TaskID: id, Release: ptr(true)})
	wantErr(t, err, 409, errs.Conflict, "release", "")
	f.takeEvents()
	rel, err := f.svc.UpdateFor(Call{Actor: "ann"}, UpdateInput{TaskID: id, Release: ptr(true)})
	if err != nil || rel.Status != StatusTodo || rel.ClaimedBy != "" {
		t.Fatalf("release %+v %v", rel, err)
	}
	if g := f.get(t, id); g.Assignee != DefaultAssignee || g.ClaimedBy != "" {
		t.Fatalf("released task %+v", g)
	}
	ev = f.takeEvents()
	if len(ev) != 2 || ev[1].typ != EventReleased || ev[1].data["holder"] != "ann" || ev[1].data["released_by"] != "ann" {
		t.Fatalf("release events %+v", ev)
	}
	_, err = f.svc.UpdateFor(Call{Actor: "ann"}, UpdateInput{TaskID: id, Release: ptr(true)})
	wantErr(t, err, 409, errs.Conflict, "release", "")
	// Leaving in_progress releases the claim.
	if _, err := claimAs(f, "bob", id); err != nil {
		t.Fatal(err)
	}
	f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusReview)})
	if g := f.get(t, id); g.ClaimedBy != "" {
		t.Fatalf("claim survived leaving in_progress: %+v", g)
	}
	// Claiming needs a move to in_progress the table allows.
	backlog := f.create(t, CreateInput{Title: "b", Project: "alpha"}).TaskID
	_, err = claimAs(f, "ann", backlog)
	wantErr(t, err, 400, errs.InvalidTransition, "status", "transition")
	// Inputs that contradict a claim or a release.
	for _, u := range []struct {
		in    UpdateInput
		field string
	}{
		{UpdateInput{TaskID: id, Claim: ptr(true), Release: ptr(true)}, "release"},
		{UpdateInput{TaskID: id, Claim: ptr(true), Status: ptr(StatusDone)}, "status"},
		{UpdateInput{TaskID: id, Claim: ptr(true), Assignee: ptr("x")}, "assignee"},
		{UpdateInput{TaskID: id, Release: ptr(true), Status: ptr(StatusInProgress)}, "status"},
	} {
		_, err := f.svc.Update("ann", u.in)
		wantErr(t, err, 400, errs.InvalidInput, u.field, "conflicts")
	}
}

// claim: true on task_next_actions takes the first candidate and returns
// only it; the next claimer gets the next one; nothing left → empty.
func TestNextActionsClaim(t *testing.T) { pgtest.EachStore(t, testNextActionsClaim) }

func testNextActionsClaim(t *testing.T) {
	f := newFixture(t, "alpha")
	low := f.create(t, CreateInput{Title: "low", Project: "alpha", Priority: ptr(PriorityLow)}).TaskID
	high := f.create(t, CreateInput{Title: "high", Project: "alpha", Priority: ptr(PriorityHigh)}).TaskID
	for _, id := range []string{low, high} {
		f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusTodo)})
	}
	claim := func(actor string) NextOutput {
		out, err := f.svc.NextActionsFor(Call{Actor: actor}, NextInput{Project: "alpha", Claim: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := claim("ann")
	if a.Claimed != high || a.Count != 1 || a.NextActions[0].TaskID != high || a.NextActions[0].Assignee != "ann" {
		t.Fatalf("first claim %+v", a)
	}
	b := claim("bob")
	if b.Claimed != low {
		t.Fatalf("second claim %+v", b)
	}
	c := claim("cy")
	if c.Claimed != "" || c.Count != 0 || c.NextActions == nil {
		t.Fatalf("empty claim %+v", c)
	}
	if g := f.get(t, high); g.Status != StatusInProgress || g.ClaimedBy != "ann" {
		t.Fatalf("claimed task %+v", g)
	}
}

// 16 claimers race over 200 ready tasks: every task is claimed exactly
// once, and each claimer is told only of tasks it holds.
func TestClaimRace(t *testing.T) { pgtest.EachStore(t, testClaimRace) }

func testClaimRace(t *testing.T) {
	f := newFixture(t, "alpha")
	const tasks, claimers = 200, 16
	for i := 0; i < tasks; i++ {
		id := f.create(t, CreateInput{Title: fmt.Sprint("t", i), Project: "alpha"}).TaskID
		f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusTodo)})
	}
	var mu sync.Mutex
	got := map[string]string{}
	var wg sync.WaitGroup
	errc := make(chan error, claimers)
	for c := 0; c < claimers; c++ {
		wg.Add(1)
		go func(actor string) {
			defer wg.Done()
			for {
				out, err := f.svc.NextActionsFor(Call{Actor: actor}, NextInput{Project: "alpha", Claim: ptr(true)})
				if err != nil {
					errc <- err
					return
				}
				if out.Claimed == "" {
					return
				}
				mu.Lock()
				if prev, dup := got[out.Claimed]; dup {
					mu.Unlock()
					errc <- fmt.Errorf("%s claimed by %s and %s", out.Claimed, prev, actor)
					return
				}
				got[out.Claimed] = actor
				mu.Unlock()
			}
		}(fmt.Sprint("agent-", c))
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if len(got) != tasks {
		t.Fatalf("%d tasks claimed, want %d", len(got), tasks)
	}
	for id, actor := range got {
		if g := f.get(t, id); g.ClaimedBy != actor || g.Assignee != actor || g.Status != StatusInProgress {
			t.Fatalf("%s: %+v, told %s", id, g, actor)
		}
	}
}

// Archived projects refuse new tasks (409 naming the state) but keep reads
// and updates; deleted projects are unknown; the session's own project
// counts as registered and is registered on first write.
func TestProjectStatesAndSessionProject(t *testing.T) {
	pgtest.EachStore(t, testProjectStatesAndSessionProject)
}

func testProjectStatesAndSessionProject(t *testing.T) {
	f := newFixture(t, "alpha")
	id := f.taskIn(t, "alpha", StatusTodo)
	if _, err := f.svc.SetProjectArchived("alpha", true); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.Create("a", CreateInput{Title: "x", Project: "alpha"})
	if e := wantErr(t, err, 409, errs.Conflict, "project", ""); e.Details["state"] != ProjectArchived {
		t.Fatalf("details %v", e.Details)
	}
	if out, err := f.svc.NextActions(NextInput{Project: "alpha"}); err != nil || out.Count != 1 {
		t.Fatalf("archived reads: %+v %v", out, err)
	}
	f.update(t, UpdateInput{TaskID: id, Priority: ptr(PriorityHigh)})
	if _, err := f.svc.SetProjectArchived("alpha", false); err != nil {
		t.Fatal(err)
	}
	f.create(t, CreateInput{Title: "again", Project: "alpha"})
	if err := f.svc.DeleteProject("alpha"); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Create("a", CreateInput{Title: "x", Project: "alpha"})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
	_, err = f.svc.NextActions(NextInput{Project: "alpha"})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
	if g := f.get(t, id); g.Project != "alpha" {
		t.Fatalf("a deleted project's task must stay readable: %+v", g)
	}

	// Session project: readable before it exists, registered by a write.
	sess := Call{Actor: "a", Project: "my-repo"}
	if out, err := f.svc.NextActionsFor(sess, NextInput{Project: "my-repo"}); err != nil || out.Count != 0 {
		t.Fatalf("session project read: %+v %v", out, err)
	}
	if ok, _ := f.svc.HasProject("my-repo"); ok {
		t.Fatal("a read registered the session project")
	}
	if _, err := f.svc.CreateFor(sess, CreateInput{Title: "first", Project: "my-repo"}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.svc.HasProject("my-repo"); !ok {
		t.Fatal("the first write did not register the session project")
	}
	// Another session's project is not this session's.
	_, err = f.svc.CreateFor(sess, CreateInput{Title: "x", Project: "their-repo"})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
}

// A repeated idempotency key returns the first output and writes nothing:
// task_create, task_update and a claim.
func TestIdempotentWrites(t *testing.T) { pgtest.EachStore(t, testIdempotentWrites) }

func testIdempotentWrites(t *testing.T) {
	f := newFixture(t, "alpha")
	k := Call{Actor: "a", Idem: idempotency.Key{Key: "sess:1"}.For("task_create", []byte(`{"title":"once"}`))}
	first, err := f.svc.CreateFor(k, CreateInput{Title: "once", Project: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	f.takeEvents()
	again, err := f.svc.CreateFor(k, CreateInput{Title: "once", Project: "alpha"})
	if err != nil || again != first {
		t.Fatalf("replay %+v %v, want %+v", again, err, first)
	}
	if ev := f.takeEvents(); len(ev) != 0 {
		t.Fatalf("a replay published %v", ev)
	}
	if out, _ := f.svc.List(ListInput{}); out.TotalCount != 1 {
		t.Fatalf("%d tasks after a replayed create", out.TotalCount)
	}
	// The same key names one call: on another tool it is refused, and
	// nothing is written (docs/decisions.md D42).
	reused := Call{Actor: "a", Idem: idempotency.Key{Key: "sess:1"}.For("task_update", []byte(`{"task_id":"T-1","status":"todo"}`))}
	if _, err := f.svc.UpdateFor(reused, UpdateInput{TaskID: first.TaskID, Status: ptr(StatusTodo)}); err == nil {
		t.Fatal("a key used for task_create answered a task_update")
	} else if e, ok := errs.As(err); !ok || e.Status != 409 || e.Details["constraint"] != "sameCall" {
		t.Fatalf("a key used for task_create, sent with task_update: %v; want 409 sameCall", err)
	}
	if got, _ := f.svc.Get(GetInput{TaskID: first.TaskID}); got.Status != StatusBacklog {
		t.Fatalf("a refused update changed the status to %s", got.Status)
	}
	u := Call{Actor: "a", Idem: idempotency.Key{Key: "sess:1b"}.For("task_update", []byte(`{"task_id":"T-1","status":"todo"}`))}
	up, err := f.svc.UpdateFor(u, UpdateInput{TaskID: first.TaskID, Status: ptr(StatusTodo)})
	if err != nil || up.PreviousStatus != StatusBacklog {
		t.Fatalf("update %+v %v", up, err)
	}
	rep, err := f.svc.UpdateFor(u, UpdateInput{TaskID: first.TaskID, Status: ptr(StatusTodo)})
	if err != nil || rep.PreviousStatus != StatusBacklog || rep.UpdatedAt != up.UpdatedAt {
		t.Fatalf("replayed update must return the first outcome: %+v %v", rep, err)
	}
	c := Call{Actor: "ann", Idem: idempotency.Key{Key: "sess:2"}}
	cl, err := f.svc.NextActionsFor(c, NextInput{Project: "alpha", Claim: ptr(true)})
	if err != nil || cl.Claimed != first.TaskID {
		t.Fatalf("claim %+v %v", cl, err)
	}
	cl2, err := f.svc.NextActionsFor(c, NextInput{Project: "alpha", Claim: ptr(true)})
	if err != nil || cl2.Claimed != first.TaskID || !slices.Equal(ids2(cl2), ids2(cl)) {
		t.Fatalf("replayed claim %+v %v", cl2, err)
	}
}

func ids2(o NextOutput) []string {
	var out []string
	for _, n := range o.NextActions {
		out = append(out, n.TaskID)
	}
	return out
}
