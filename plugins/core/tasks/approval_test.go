package tasks

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// approvalFixture is a fixture whose project "p" has approval mode, with
// a task in review that agent-2 moved there (fixture.update's actor).
func approvalFixture(t *testing.T, mode string) (*fixture, string) {
	t.Helper()
	f := newFixture(t, "p")
	if _, err := f.svc.ProjectApproval("operator", ProjectApprovalInput{Project: "p", Mode: ptr(mode)}); err != nil {
		t.Fatal(err)
	}
	return f, f.taskIn(t, "p", StatusReview)
}

func toDone(id string) UpdateInput { return UpdateInput{TaskID: id, Status: ptr(StatusDone)} }

// asJSON renders v as generic JSON, so details compare as a client reads
// them.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestProjectApprovalMode(t *testing.T) { pgtest.EachStore(t, testProjectApprovalMode) }

func testProjectApprovalMode(t *testing.T) {
	f := newFixture(t, "p")
	got, err := f.svc.ProjectApproval("operator", ProjectApprovalInput{Project: "p"})
	if err != nil || got != (ProjectApprovalOutput{Project: "p", Mode: ApprovalOff}) {
		t.Fatalf("default mode %+v %v, want off, never changed", got, err)
	}
	set, err := f.svc.ProjectApproval("alice", ProjectApprovalInput{Project: "p", Mode: ptr(ApprovalStrict)})
	if err != nil || set.Mode != ApprovalStrict || set.ChangedBy != "alice" || set.ChangedAt == "" {
		t.Fatalf("set strict: %+v %v", set, err)
	}
	again, err := f.svc.ProjectApproval("bob", ProjectApprovalInput{Project: "p", Mode: ptr(ApprovalStrict)})
	if err != nil || again != set {
		t.Fatalf("setting the same mode changed the record: %+v, was %+v (%v)", again, set, err)
	}
	if read, _ := f.svc.ProjectApproval("bob", ProjectApprovalInput{Project: "p"}); read != set {
		t.Fatalf("read %+v, want %+v", read, set)
	}
	// A project deleted and registered again starts without approval.
	if err := f.svc.DeleteProject("p"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddProject("p"); err != nil {
		t.Fatal(err)
	}
	if read, _ := f.svc.ProjectApproval("bob", ProjectApprovalInput{Project: "p"}); read.Mode != ApprovalOff || read.ChangedBy != "" {
		t.Fatalf("a project registered again kept its approval: %+v", read)
	}
	_, err = f.svc.ProjectApproval("alice", ProjectApprovalInput{Project: "nope", Mode: ptr(ApprovalOn)})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "")
	_, err = f.svc.ProjectApproval("alice", ProjectApprovalInput{Project: "p", Mode: ptr("always")})
	wantErr(t, err, 400, errs.InvalidInput, "mode", "enum")
	_, err = f.svc.ProjectApproval("alice", ProjectApprovalInput{Project: "Bad Slug"})
	wantErr(t, err, 400, errs.InvalidInput, "project", "pattern")
}

// Without approval a move to done is what it always was.
func TestApprovalOffLetsDoneThrough(t *testing.T) {
	t.Parallel()
	f, id := approvalFixture(t, ApprovalOff)
	if out := f.update(t, toDone(id)); out.Status != StatusDone {
		t.Fatalf("status %s", out.Status)
	}
	if got := f.get(t, id); got.Approval != nil {
		t.Fatalf("approval %+v shown in a project without approval", got.Approval)
	}
}

func TestMoveToDoneWaitsForAPerson(t *testing.T) { pgtest.EachStore(t, testMoveToDoneWaitsForAPerson) }

func testMoveToDoneWaitsForAPerson(t *testing.T) {
	for _, mode := range []string{ApprovalOn, ApprovalStrict} {
		t.Run(mode, func(t *testing.T) {
			f, id := approvalFixture(t, mode)
			f.takeEvents()
			_, err := f.svc.Update("agent-1", toDone(id))
			e := wantErr(t, err, 428, errs.ApprovalRequired, "", "")
			want := map[string]any{
				"task_id": id, "project": "p", "mode": mode, "ask_client": mode == ApprovalOn,
				"question": "Approve " + id + " “task in review” (review → done), asked by agent-1?",
				"approve":  map[string]any{"tool": "task_approve", "args": map[string]any{"task_id": id}},
				"where":    "the dashboard's Approvals page (cairn ui --allow-actions) or `cairn task approve " + id + "`",
			}
			if got := asJSON(t, e.Details); !reflect.DeepEqual(got, asJSON(t, want)) {
				t.Fatalf("details\n%v\nwant\n%v", got, want)
			}
			if got := f.get(t, id); got.Status != StatusReview || got.UpdatedBy != "agent-2" {
				t.Fatalf("the refused move changed the task: %s by %s", got.Status, got.UpdatedBy)
			}
			// The refusal left a request people see.
			list, err := f.svc.Approvals(ApprovalsInput{})
			if err != nil || len(list.Pending) != 1 {
				t.Fatalf("pending %+v %v", list, err)
			}
			p := list.Pending[0]
			if p.TaskID != id || p.Project != "p" || p.Mode != mode || p.Status != StatusReview || p.RequestedBy != "agent-1" || p.RequestedAt == "" || p.Title != "task in review" {
				t.Fatalf("pending request %+v", p)
			}
			a := f.get(t, id).Approval
			if a == nil || *a != (Approval{Mode: mode, State: ApprovalPending, By: "agent-1", At: p.RequestedAt}) {
				t.Fatalf("task_get's approval %+v", a)
			}
			evs := f.takeEvents()
			if len(evs) != 1 || evs[0].typ != EventApprovalRequested || evs[0].data["requested_by"] != "agent-1" {
				t.Fatalf("events %+v, want one %s", evs, EventApprovalRequested)
			}
			// Asking again while the same request waits writes nothing.
			_, err = f.svc.Update("agent-1", toDone(id))
			wantErr(t, err, 428, errs.ApprovalRequired, "", "")
			if evs := f.takeEvents(); len(evs) != 0 {
				t.Fatalf("a repeated request published %+v", evs)
			}
			if other, _ := f.svc.Approvals(ApprovalsInput{Project: ptr("q")}); len(other.Pending) != 0 {
				t.Fatalf("another project's filter listed %+v", other.Pending)
			}
		})
	}
}

func TestApproveCompletesTheMove(t *testing.T) { pgtest.EachStore(t, testApproveCompletesTheMove) }

func testApproveCompletesTheMove(t *testing.T) {
	f, id := approvalFixture(t, ApprovalOn)
	_, err := f.svc.Update("agent-1", toDone(id))
	wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	f.takeEvents()
	out, err := f.svc.Decide(Call{Actor: "alice"}, ApproveInput{TaskID: id, Decision: DecisionApprove})
	if err != nil {
		t.Fatal(err)
	}
	if out.State != ApprovalApproved || out.By != "alice" || out.Via != ViaCLI || out.Status != StatusDone || out.PreviousStatus != StatusReview || out.Mode != ApprovalOn {
		t.Fatalf("decision %+v", out)
	}
	got := f.get(t, id)
	if got.Status != StatusDone || got.UpdatedBy != "alice" || got.Progress != MaxProgress {
		t.Fatalf("task after approval: %s by %s, progress %g", got.Status, got.UpdatedBy, got.Progress)
	}
	if got.Approval == nil || *got.Approval != (Approval{Mode: ApprovalOn, State: ApprovalApproved, By: "alice", At: out.At, Via: ViaCLI}) {
		t.Fatalf("approval %+v", got.Approval)
	}
	var types []string
	for _, e := range f.takeEvents() {
		types = append(types, e.typ)
	}
	if !reflect.DeepEqual(types, []string{EventUpdated, EventApprovalDecided}) {
		t.Fatalf("events %v", types)
	}
	if list, _ := f.svc.Approvals(ApprovalsInput{}); len(list.Pending) != 0 {
		t.Fatalf("a decided request is still pending: %+v", list.Pending)
	}
	// Done, there is nothing left to decide.
	_, err = f.svc.Decide(Call{Actor: "alice"}, ApproveInput{TaskID: id, Decision: DecisionApprove})
	wantErr(t, err, 409, errs.Conflict, "task_id", "")
}

// The host's bridge records the approval without the move and repeats the
// agent's own update, which the standing approval lets through.
func TestApprovalStandsForTheRetry(t *testing.T) {
	t.Parallel()
	f, id := approvalFixture(t, ApprovalOn)
	_, err := f.svc.Update("agent-1", toDone(id))
	wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	out, err := f.svc.Decide(Call{Actor: "agent-1"}, ApproveInput{TaskID: id, Decision: DecisionApprove, Via: ptr(ViaElicitation), CompleteMove: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusReview || out.PreviousStatus != "" || out.By != "agent-1 (person at the client)" || out.Via != ViaElicitation {
		t.Fatalf("decision %+v", out)
	}
	up, err := f.svc.Update("agent-1", toDone(id))
	if err != nil || up.Status != StatusDone || up.UpdatedBy != "agent-1" {
		t.Fatalf("the retry after approval: %+v %v", up, err)
	}
}

// A 428 is not a key's outcome: the same call, retried under the same
// idempotency key after a person approved, runs again and succeeds; its
// success is then the key's outcome (docs/decisions.md D42).
func TestApprovalRefusalIsNotTheKeysOutcome(t *testing.T) {
	pgtest.EachStore(t, testApprovalRefusalIsNotTheKeysOutcome)
}

func testApprovalRefusalIsNotTheKeysOutcome(t *testing.T) {
	f, id := approvalFixture(t, ApprovalOn)
	k := Call{Actor: "agent-1", Idem: idempotency.Key{Key: "sess:7"}.For("task_update", []byte(`{"task_id":"`+id+`","status":"done"}`))}
	_, err := f.svc.UpdateFor(k, toDone(id))
	wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	_, err = f.svc.UpdateFor(k, toDone(id))
	wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	if _, err := f.svc.Decide(Call{Actor: "alice"}, ApproveInput{TaskID: id, Decision: DecisionApprove, CompleteMove: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	first, err := f.svc.UpdateFor(k, toDone(id))
	if err != nil || first.Status != StatusDone || first.PreviousStatus != StatusReview {
		t.Fatalf("the same call after approval: %+v %v", first, err)
	}
	replay, err := f.svc.UpdateFor(k, toDone(id))
	if err != nil || !reflect.DeepEqual(replay, first) {
		t.Fatalf("replay %+v %v, want the recorded %+v", replay, err, first)
	}
}

func TestRejectionSendsTheTaskBack(t *testing.T) { pgtest.EachStore(t, testRejectionSendsTheTaskBack) }

func testRejectionSendsTheTaskBack(t *testing.T) {
	f, id := approvalFixture(t, ApprovalStrict)
	_, err := f.svc.Update("agent-1", toDone(id))
	wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	out, err := f.svc.Decide(Call{Actor: "bob"}, ApproveInput{TaskID: id, Decision: DecisionReject, Reason: ptr("  the tests do not cover the error path  "), Via: ptr(ViaDashboard)})
	if err != nil {
		t.Fatal(err)
	}
	if out.State != ApprovalRejected || out.Status != StatusInProgress || out.PreviousStatus != StatusReview || out.Reason != "the tests do not cover the error path" {
		t.Fatalf("rejection %+v", out)
	}
	got := f.get(t, id)
	if got.Status != StatusInProgress || got.UpdatedBy != "bob" {
		t.Fatalf("after rejection: %s by %s", got.Status, got.UpdatedBy)
	}
	want := Approval{Mode: ApprovalStrict, State: ApprovalRejected, By: "bob", At: out.At, Reason: "the tests do not cover the error path", Via: ViaDashboard}
	if got.Approval == nil || *got.Approval != want {
		t.Fatalf("approval %+v, want %+v", got.Approval, want)
	}
	// task_context shows it on the agent's own tasks.
	f.update(t, UpdateInput{TaskID: id, Assignee: ptr("agent-1")})
	mine, _, err := f.svc.Mine("agent-1")
	if err != nil || len(mine) != 1 || mine[0].Approval == nil || *mine[0].Approval != want {
		t.Fatalf("Mine: %+v %v, want the rejection %+v", mine, err, want)
	}
	if list, _ := f.svc.Approvals(ApprovalsInput{}); len(list.Pending) != 0 {
		t.Fatalf("a rejected request is still pending: %+v", list.Pending)
	}
	// The agent's next move to done is refused again, saying why.
	f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusReview)})
	_, err = f.svc.Update("agent-1", toDone(id))
	e := wantErr(t, err, 428, errs.ApprovalRequired, "", "")
	rej := asJSON(t, e.Details["rejected"])
	if !reflect.DeepEqual(rej, asJSON(t, map[string]any{"by": "bob", "at": out.At, "reason": "the tests do not cover the error path"})) {
		t.Fatalf("details.rejected %v", rej)
	}
	if list, _ := f.svc.Approvals(ApprovalsInput{Project: ptr("p")}); len(list.Pending) != 1 {
		t.Fatalf("the new request is not pending: %+v", list.Pending)
	}
}

func TestDecisionRefusals(t *testing.T) { pgtest.EachStore(t, testDecisionRefusals) }

func testDecisionRefusals(t *testing.T) {
	type refusal struct {
		name   string
		mode   string
		ask    bool // agent-1 asked first
		done   bool // the task is done before the decision
		actor  string
		in     func(id string) ApproveInput
		status int
		code   string
		field  string
		detail map[string]any
	}
	approve := func(id string) ApproveInput { return ApproveInput{TaskID: id, Decision: DecisionApprove} }
	for _, c := range []refusal{
		{name: "self approval of a request", mode: ApprovalOn, ask: true, actor: "agent-1", in: approve,
			status: 403, code: errs.Forbidden, field: "task_id", detail: map[string]any{"required": "another person", "requested_by": "agent-1"}},
		{name: "self approval without a request", mode: ApprovalOn, actor: "agent-2", in: approve,
			status: 403, code: errs.Forbidden, field: "task_id", detail: map[string]any{"required": "another person", "requested_by": "agent-2"}},
		{name: "strict refuses the person at the client", mode: ApprovalStrict, ask: true, actor: "agent-1",
			in: func(id string) ApproveInput {
				return ApproveInput{TaskID: id, Decision: DecisionApprove, Via: ptr(ViaElicitation)}
			},
			status: 403, code: errs.Forbidden, field: "via", detail: map[string]any{"required": "dashboard or cli"}},
		{name: "strict refuses an input request", mode: ApprovalStrict, ask: true, actor: "alice",
			in: func(id string) ApproveInput {
				return ApproveInput{TaskID: id, Decision: DecisionReject, Reason: ptr("no"), Via: ptr(ViaInputRequest)}
			},
			status: 403, code: errs.Forbidden, field: "via"},
		{name: "project without approval", mode: ApprovalOff, actor: "alice", in: approve, status: 409, code: errs.Conflict, field: "task_id"},
		{name: "task already done", mode: ApprovalOn, done: true, actor: "alice", in: approve, status: 409, code: errs.Conflict, field: "task_id"},
		{name: "reject without a reason", mode: ApprovalOn, actor: "alice",
			in: func(id string) ApproveInput {
				return ApproveInput{TaskID: id, Decision: DecisionReject, Reason: ptr("   ")}
			},
			status: 400, code: errs.InvalidInput, field: "reason"},
		{name: "unknown decision", mode: ApprovalOn, actor: "alice",
			in:     func(id string) ApproveInput { return ApproveInput{TaskID: id, Decision: "maybe"} },
			status: 400, code: errs.InvalidInput, field: "decision"},
		{name: "unknown via", mode: ApprovalOn, actor: "alice",
			in: func(id string) ApproveInput {
				return ApproveInput{TaskID: id, Decision: DecisionApprove, Via: ptr("email")}
			},
			status: 400, code: errs.InvalidInput, field: "via"},
		{name: "unknown task", mode: ApprovalOn, actor: "alice",
			in:     func(string) ApproveInput { return ApproveInput{TaskID: "T-999", Decision: DecisionApprove} },
			status: 404, code: errs.TaskNotFound, field: "task_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, id := approvalFixture(t, c.mode)
			if c.ask {
				_, err := f.svc.Update("agent-1", toDone(id))
				wantErr(t, err, 428, errs.ApprovalRequired, "", "")
			}
			if c.done {
				if _, err := f.svc.Decide(Call{Actor: "carol"}, approve(id)); err != nil {
					t.Fatal(err)
				}
			}
			before := f.get(t, id)
			_, err := f.svc.Decide(Call{Actor: c.actor}, c.in(id))
			e := wantErr(t, err, c.status, c.code, c.field, "")
			for k, v := range c.detail {
				if e.Details[k] != v {
					t.Errorf("details.%s %v, want %v", k, e.Details[k], v)
				}
			}
			if after := f.get(t, id); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused decision changed the task:\n%+v\n%+v", after, before)
			}
		})
	}
}

// The person at the agent's client may approve what the agent asked for
// (the host asked them), and is recorded as such.
func TestPersonAtTheClientApproves(t *testing.T) {
	t.Parallel()
	for _, via := range []string{ViaElicitation, ViaInputRequest} {
		f, id := approvalFixture(t, ApprovalOn)
		_, err := f.svc.Update("agent-1", toDone(id))
		wantErr(t, err, 428, errs.ApprovalRequired, "", "")
		out, err := f.svc.Decide(Call{Actor: "agent-1"}, ApproveInput{TaskID: id, Decision: DecisionApprove, Via: ptr(via)})
		if err != nil {
			t.Fatalf("%s: %v", via, err)
		}
		if out.By != "agent-1 (person at the client)" || out.Via != via || out.Status != StatusDone {
			t.Fatalf("%s: %+v", via, out)
		}
	}
}

// Moves other than to done, and the import's replayed steps, need no one.
func TestOnlyMovesToDoneWait(t *testing.T) {
	t.Parallel()
	f, id := approvalFixture(t, ApprovalStrict)
	f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusBlocked), BlockedReason: ptr("waiting")})
	f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusInProgress)})
	// A move the lifecycle refuses stays a 400, not a request.
	_, err := f.svc.Update("agent-1", toDone(id))
	wantErr(t, err, 400, errs.InvalidTransition, "status", "transition")
	if list, _ := f.svc.Approvals(ApprovalsInput{}); len(list.Pending) != 0 {
		t.Fatalf("an invalid move left a request: %+v", list.Pending)
	}
}

// task_approve honours its idempotency key: a retried decision answers
// its first outcome and decides nothing twice.
func TestDecisionHonoursItsKey(t *testing.T) {
	t.Parallel()
	f, id := approvalFixture(t, ApprovalOn)
	k := Call{Actor: "alice", Idem: idempotency.Key{Key: "dash:1"}.For("task_approve", []byte(`{"task_id":"`+id+`","decision":"approve"}`))}
	first, err := f.svc.Decide(k, ApproveInput{TaskID: id, Decision: DecisionApprove})
	if err != nil || first.Status != StatusDone {
		t.Fatalf("decision %+v %v", first, err)
	}
	f.takeEvents()
	again, err := f.svc.Decide(k, ApproveInput{TaskID: id, Decision: DecisionApprove})
	if err != nil || again != first {
		t.Fatalf("retried decision %+v %v, want the first %+v", again, err, first)
	}
	if evs := f.takeEvents(); len(evs) != 0 {
		t.Fatalf("a retried decision published %+v", evs)
	}
}
