package tasks

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// An empty task_next_actions says where the open tasks are (docs/decisions.md
// D10); a non-empty one does not.
func TestNextActionsEmptySaysWhy(t *testing.T) { pgtest.EachStore(t, testNextActionsEmptySaysWhy) }

func testNextActionsEmptySaysWhy(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, f *fixture)
		want   EmptyBecause
		inHint []string
	}{
		{
			name:   "no tasks",
			setup:  func(*testing.T, *fixture) {},
			inHint: []string{"no open tasks", "task_create"},
		},
		{
			name: "fresh tasks sit in backlog",
			setup: func(t *testing.T, f *fixture) {
				f.taskIn(t, "alpha", StatusBacklog)
				f.taskIn(t, "alpha", StatusBacklog)
				f.taskIn(t, "alpha", StatusDone)
				f.taskIn(t, "beta", StatusTodo) // another project's task is not counted
			},
			want:   EmptyBecause{Backlog: 2},
			inHint: []string{"2 in backlog", "move them to todo"},
		},
		{
			name: "everything is taken or waits",
			setup: func(t *testing.T, f *fixture) {
				dep := f.taskIn(t, "alpha", StatusBacklog)
				waiting := f.taskIn(t, "alpha", StatusTodo)
				f.update(t, UpdateInput{TaskID: waiting, DependsOn: &[]string{dep}})
				f.taskIn(t, "alpha", StatusBlocked)
				f.taskIn(t, "alpha", StatusReview)
				for _, who := range []string{"bob", "ann"} {
					id := f.taskIn(t, "alpha", StatusTodo)
					if _, err := claimAs(f, who, id); err != nil {
						t.Fatal(err)
					}
				}
				f.taskIn(t, "alpha", StatusInProgress) // in progress, claimed by nobody
			},
			want: EmptyBecause{Backlog: 1, WaitingOnDependencies: 1, Blocked: 1, ClaimedByOthers: 1, InProgress: 3, InReview: 1},
			inHint: []string{"1 in backlog", "1 todo waiting on open dependencies", "1 blocked",
				"3 in progress, 1 of them claimed by others", "1 in review"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "alpha", "beta")
			c.setup(t, f)
			for _, claim := range []bool{false, true} {
				out, err := f.svc.NextActionsFor(Call{Actor: "ann"}, NextInput{Project: "alpha", Claim: ptr(claim)})
				if err != nil || out.Count != 0 || out.EmptyBecause == nil {
					t.Fatalf("claim %v: %+v %v", claim, out, err)
				}
				got := *out.EmptyBecause
				hint := got.Hint
				got.Hint = ""
				if got != c.want {
					t.Fatalf("claim %v: empty_because %+v, want %+v", claim, got, c.want)
				}
				for _, s := range c.inHint {
					if !strings.Contains(hint, s) {
						t.Fatalf("hint %q lacks %q", hint, s)
					}
				}
			}
		})
	}
	f := newFixture(t, "alpha")
	f.taskIn(t, "alpha", StatusTodo)
	f.taskIn(t, "alpha", StatusBacklog)
	out, err := f.svc.NextActions(NextInput{Project: "alpha"})
	if err != nil || out.Count != 1 || out.EmptyBecause != nil {
		t.Fatalf("a non-empty answer: %+v %v", out, err)
	}
}
