package tasks

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A claim waits for the task's dependencies (docs/decisions.md D27): open
// ones refuse it with 409 naming each and its status, unless forced.
func TestClaimRespectsDependencies(t *testing.T) {
	pgtest.EachStore(t, testClaimRespectsDependencies)
}

func testClaimRespectsDependencies(t *testing.T) {
	cases := []struct {
		name     string
		deps     []string // statuses of the task's dependencies
		force    bool
		replace  bool // give the dependencies in the claiming update itself
		wantOpen []string
		wantErr  bool
	}{
		{name: "no dependencies", deps: nil},
		{name: "all finished", deps: []string{StatusDone, StatusCancelled}},
		{name: "one open", deps: []string{StatusTodo}, wantOpen: []string{"todo"}, wantErr: true},
		{name: "mixed", deps: []string{StatusDone, StatusInProgress, StatusReview}, wantOpen: []string{"in_progress", "review"}, wantErr: true},
		{name: "given with the claim", deps: []string{StatusBacklog}, replace: true, wantOpen: []string{"backlog"}, wantErr: true},
		{name: "forced", deps: []string{StatusBlocked, StatusDone}, force: true, wantOpen: []string{"blocked"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "alpha")
			var mu sync.Mutex
			var changes []Change
			f.svc.cfg.OnChange = func(_ kv.Tx, ch Change) error {
				mu.Lock()
				changes = append(changes, ch)
				mu.Unlock()
				return nil
			}
			var depIDs, wantNamed []string
			for _, s := range c.deps {
				id := f.taskIn(t, "alpha", s)
				depIDs = append(depIDs, id)
				if isOpen(statusCode(s)) {
					wantNamed = append(wantNamed, id+" ("+s+")")
				}
			}
			id := f.taskIn(t, "alpha", StatusTodo)
			in := UpdateInput{TaskID: id, Claim: ptr(true)}
			if c.force {
				in.Force = ptr(true)
			}
			if c.replace {
				in.DependsOn = &depIDs
			} else if len(depIDs) > 0 {
				f.update(t, UpdateInput{TaskID: id, DependsOn: &depIDs})
			}
			f.takeEvents()
			mu.Lock()
			changes = nil
			mu.Unlock()
			out, err := f.svc.UpdateFor(Call{Actor: "ann"}, in)
			if c.wantErr {
				e := wantErr(t, err, 409, errs.Conflict, "claim", "")
				open, _ := e.Details["open_dependencies"].([]openDependency)
				if len(open) != len(c.wantOpen) {
					t.Fatalf("open_dependencies %v, want statuses %v", e.Details["open_dependencies"], c.wantOpen)
				}
				for i, d := range open {
					if d.Status != c.wantOpen[i] || !strings.Contains(e.Message, d.TaskID+" ("+d.Status+")") {
						t.Fatalf("dependency %+v not named as %s in %q", d, c.wantOpen[i], e.Message)
					}
				}
				if g := f.get(t, id); g.Status != StatusTodo || g.ClaimedBy != "" {
					t.Fatalf("refused claim changed the task: %+v", g)
				}
				if ev := f.takeEvents(); len(ev) != 0 {
					t.Fatalf("refused claim published %+v", ev)
				}
				return
			}
			if err != nil || out.ClaimedBy != "ann" || out.Status != StatusInProgress {
				t.Fatalf("claim: %+v %v", out, err)
			}
			var claimed map[string]any
			for _, e := range f.takeEvents() {
				if e.typ == EventClaimed {
					claimed = e.data
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(changes) != 1 {
				t.Fatalf("chain changes %+v", changes)
			}
			forced, recorded := changes[0].Data["forced_claim"]
			if !c.force {
				if recorded || claimed["forced_claim"] != nil {
					t.Fatalf("unforced claim recorded forced_claim: %v %v", changes[0].Data, claimed)
				}
				return
			}
			if !slices.Equal(forced.([]string), wantNamed) || !slices.Equal(claimed["forced_claim"].([]string), wantNamed) {
				t.Fatalf("forced_claim chain %v event %v, want %v", forced, claimed["forced_claim"], wantNamed)
			}
		})
	}
}

// force without claim is refused, naming the field; re-claiming a held
// task is a no-op even after a dependency opened.
func TestForceNeedsClaim(t *testing.T) { pgtest.EachStore(t, testForceNeedsClaim) }

func testForceNeedsClaim(t *testing.T) {
	f := newFixture(t, "alpha")
	id := f.taskIn(t, "alpha", StatusTodo)
	_, err := f.svc.UpdateFor(Call{Actor: "ann"}, UpdateInput{TaskID: id, Force: ptr(true)})
	wantErr(t, err, 400, errs.InvalidInput, "force", "requires")
	if _, err := claimAs(f, "ann", id); err != nil {
		t.Fatal(err)
	}
	dep := f.taskIn(t, "alpha", StatusTodo)
	f.update(t, UpdateInput{TaskID: id, DependsOn: &[]string{dep}})
	if out, err := claimAs(f, "ann", id); err != nil || out.ClaimedBy != "ann" {
		t.Fatalf("re-claim by the holder: %+v %v", out, err)
	}
}
