package tasks

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// depsFixture creates n tasks T-1..T-n in project alpha.
func depsFixture(t testing.TB, n int) *fixture {
	t.Helper()
	f := newFixture(t, "alpha", "beta")
	for i := 0; i < n; i++ {
		f.create(t, CreateInput{Title: fmt.Sprintf("task %d", i+1), Project: "alpha"})
	}
	return f
}

func setDepsOf(f *fixture, id string, deps ...string) error {
	_, err := f.svc.Update("agent", UpdateInput{TaskID: id, DependsOn: &deps})
	return err
}

// Cycle detection: each row sets up edges (task → its dependencies) and
// then one update; want is the loop reported (nil: accepted).
func TestDependencyCycles(t *testing.T) { pgtest.EachStore(t, testDependencyCycles) }

func testDependencyCycles(t *testing.T) {
	type edge struct {
		task string
		deps []string
	}
	cases := []struct {
		name  string
		setup []edge
		task  string
		deps  []string
		want  []string
	}{
		{"self", nil, "T-1", []string{"T-1"}, []string{"T-1"}},
		{"self among others", nil, "T-2", []string{"T-1", "T-2"}, []string{"T-2"}},
		{"two", []edge{{"T-1", []string{"T-2"}}}, "T-2", []string{"T-1"}, []string{"T-2", "T-1"}},
		{"long chain", []edge{{"T-1", []string{"T-2"}}, {"T-2", []string{"T-3"}}, {"T-3", []string{"T-4"}}, {"T-4", []string{"T-5"}}}, "T-5", []string{"T-1"}, []string{"T-5", "T-1", "T-2", "T-3", "T-4"}},
		{"diamond is no cycle", []edge{{"T-1", []string{"T-2", "T-3"}}, {"T-2", []string{"T-4"}}, {"T-3", []string{"T-4"}}}, "T-4", []string{"T-5"}, nil},
		{"diamond closed", []edge{{"T-1", []string{"T-2", "T-3"}}, {"T-2", []string{"T-4"}}, {"T-3", []string{"T-4"}}}, "T-4", []string{"T-1"}, nil /* checked below */},
		{"shared dependency twice", []edge{{"T-1", []string{"T-3"}}, {"T-2", []string{"T-3"}}}, "T-1", []string{"T-2", "T-3"}, nil},
		{"replacing removes the old edge", []edge{{"T-1", []string{"T-2"}}}, "T-1", []string{"T-3"}, nil},
		{"replace then reverse is fine", []edge{{"T-1", []string{"T-2"}}, {"T-1", []string{}}}, "T-2", []string{"T-1"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := depsFixture(t, 6)
			for _, e := range c.setup {
				if err := setDepsOf(f, e.task, e.deps...); err != nil {
					t.Fatalf("setup %v: %v", e, err)
				}
			}
			err := setDepsOf(f, c.task, c.deps...)
			if c.name == "diamond closed" {
				e := wantErr(t, err, 409, errs.CircularDependency, "depends_on", "")
				loop := e.Details["cycle"].([]string)
				// Either way round the diamond is a true loop through T-1.
				if !slices.Equal(loop, []string{"T-4", "T-1", "T-2"}) && !slices.Equal(loop, []string{"T-4", "T-1", "T-3"}) {
					t.Fatalf("cycle %v", loop)
				}
				return
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e := wantErr(t, err, 409, errs.CircularDependency, "depends_on", "")
			if got := e.Details["cycle"].([]string); !slices.Equal(got, c.want) {
				t.Fatalf("cycle %v, want %v", got, c.want)
			}
			// A refused update changes nothing.
			if got := f.get(t, c.task).DependsOn; slices.Contains(got, c.deps[0]) {
				t.Fatalf("refused depends_on stored: %v", got)
			}
		})
	}
}

// Every rule of depends_on's input, and task_get's view of it.
func TestDependsOnRules(t *testing.T) { pgtest.EachStore(t, testDependsOnRules) }

func testDependsOnRules(t *testing.T) {
	f := depsFixture(t, 3)
	other := f.create(t, CreateInput{Title: "elsewhere", Project: "beta"}).TaskID
	many := make([]string, MaxDependsOn+1)
	for i := range many {
		many[i] = "T-1"
	}
	rows := []struct {
		name        string
		deps        []string
		status      int
		code, field string
		constraint  string
	}{
		{"unknown id", []string{"T-99"}, 404, errs.TaskNotFound, "depends_on", ""},
		{"other project", []string{other}, 400, errs.InvalidInput, "depends_on", "same_project"},
		{"malformed id", []string{"T-1", "x"}, 400, errs.InvalidInput, "depends_on[1]", "pattern"},
		{"too many", many, 400, errs.InvalidInput, "depends_on", "maxItems"},
	}
	for _, r := range rows {
		t.Run("create "+r.name, func(t *testing.T) {
			_, err := f.svc.Create("a", CreateInput{Title: "x", Project: "alpha", DependsOn: r.deps})
			e := wantErr(t, err, r.status, r.code, r.field, r.constraint)
			if r.name == "unknown id" && e.Details["task_id"] != "T-99" {
				t.Fatalf("404 does not name the id: %v", e.Details)
			}
		})
		t.Run("update "+r.name, func(t *testing.T) {
			wantErr(t, setDepsOf(f, "T-2", r.deps...), r.status, r.code, r.field, r.constraint)
		})
	}
	// Duplicates collapse; task_get lists in number order; include_dependents
	// adds depended_on_by beside the sub-task dependents.
	id := f.create(t, CreateInput{Title: "waits", Project: "alpha", DependsOn: []string{"T-3", "T-1", "T-3"}}).TaskID
	if got := f.get(t, id).DependsOn; !slices.Equal(got, []string{"T-1", "T-3"}) {
		t.Fatalf("depends_on %v", got)
	}
	if got := f.get(t, "T-2").DependsOn; got == nil || len(got) != 0 {
		t.Fatalf("no dependencies must show as [] : %#v", got)
	}
	g, err := f.svc.Get(GetInput{TaskID: "T-1", IncludeDependents: ptr(true)})
	if err != nil || !slices.Equal(g.DependedOnBy, []string{id}) || len(g.Dependents) != 0 {
		t.Fatalf("T-1 dependents %+v %v", g, err)
	}
	// Update replaces; [] removes.
	if err := setDepsOf(f, id, "T-2"); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, id).DependsOn; !slices.Equal(got, []string{"T-2"}) {
		t.Fatalf("replaced depends_on %v", got)
	}
	g, _ = f.svc.Get(GetInput{TaskID: "T-1", IncludeDependents: ptr(true)})
	if len(g.DependedOnBy) != 0 {
		t.Fatalf("old edge kept: %v", g.DependedOnBy)
	}
	if err := setDepsOf(f, id); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, id).DependsOn; len(got) != 0 {
		t.Fatalf("[] kept %v", got)
	}
}

// Readiness: a todo task is offered once every dependency is done or
// cancelled; until then include_blocked lists it with what it waits on;
// dependencies_unmet counts open sub-tasks plus open dependencies; the
// last dependency finishing publishes task.unblocked.
func TestNextActionsWithDependencies(t *testing.T) {
	pgtest.EachStore(t, testNextActionsWithDependencies)
}

func testNextActionsWithDependencies(t *testing.T) {
	f := newFixture(t, "alpha")
	a := f.taskIn(t, "alpha", StatusTodo)
	b := f.taskIn(t, "alpha", StatusTodo)
	c := f.create(t, CreateInput{Title: "after a and b", Project: "alpha", DependsOn: []string{a, b}}).TaskID
	f.update(t, UpdateInput{TaskID: c, Status: ptr(StatusTodo)})
	next := func() ([]string, []BlockedTask) {
		out, err := f.svc.NextActions(NextInput{Project: "alpha", IncludeBlocked: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, n := range out.NextActions {
			ids = append(ids, n.TaskID)
		}
		return ids, out.Blocked
	}
	ids, blocked := next()
	if !slices.Equal(ids, []string{a, b}) || len(blocked) != 1 || blocked[0].TaskID != c || !slices.Equal(blocked[0].WaitingOn, []string{a, b}) {
		t.Fatalf("next %v blocked %+v", ids, blocked)
	}
	f.takeEvents()
	for _, u := range pathTo(StatusDone)[1:] {
		u.TaskID = a
		f.update(t, u)
	}
	if ev := f.takeEvents(); slices.ContainsFunc(ev, func(e event) bool { return e.typ == EventUnblocked }) {
		t.Fatalf("unblocked too early: %v", ev)
	}
	_, blocked = next()
	if !slices.Equal(blocked[0].WaitingOn, []string{b}) {
		t.Fatalf("still waiting on %v", blocked[0].WaitingOn)
	}
	f.update(t, UpdateInput{TaskID: b, Status: ptr(StatusCancelled)})
	ev := f.takeEvents()
	if i := slices.IndexFunc(ev, func(e event) bool { return e.typ == EventUnblocked }); i < 0 || ev[i].data["task_id"] != c || ev[i].data["finished_dependency"] != b {
		t.Fatalf("events %+v", ev)
	}
	ids, blocked = next()
	if !slices.Equal(ids, []string{c}) || len(blocked) != 0 {
		t.Fatalf("after deps finished: next %v blocked %v", ids, blocked)
	}
	// A parent with an open sub-task and an open dependency in another
	// branch: dependencies_unmet counts the sub-task (ready tasks have no
	// open dependencies).
	p := f.taskIn(t, "alpha", StatusTodo)
	f.create(t, CreateInput{Title: "child", Project: "alpha", ParentID: &p})
	out, _ := f.svc.NextActions(NextInput{Project: "alpha"})
	for _, n := range out.NextActions {
		if n.TaskID == p && n.DependenciesUnmet != 1 {
			t.Fatalf("dependencies_unmet %d", n.DependenciesUnmet)
		}
	}
}

// refGraph is the reference for cycle checks: plain adjacency sets.
type refGraph map[int][]int

// wouldCycle reports whether giving task the dependencies deps closes a loop.
func (g refGraph) wouldCycle(task int, deps []int) bool {
	seen := map[int]bool{}
	var reach func(n int) bool
	reach = func(n int) bool {
		if n == task {
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		for _, m := range g[n] {
			if reach(m) {
				return true
			}
		}
		return false
	}
	for _, d := range deps {
		if reach(d) {
			return true
		}
	}
	return false
}

// FuzzDependencyGraph builds random dependency graphs over 8 tasks: each
// pair of bytes replaces one task's dependencies with a bit set. The store
// refuses exactly the updates that would close a loop, and the loop it
// reports is a real one.
func FuzzDependencyGraph(f *testing.F) {
	f.Add([]byte{0, 0b10, 1, 0b1})
	f.Add([]byte{0, 0b110, 1, 0b1000, 2, 0b1000, 3, 0b1})
	f.Add([]byte{5, 0b100000})
	f.Add([]byte{0, 0xff, 7, 0x7f, 3, 0x10})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 24 {
			ops = ops[:24]
		}
		fx := depsFixture(t, 8)
		g := refGraph{}
		for i := 0; i+1 < len(ops); i += 2 {
			task := int(ops[i]%8) + 1
			var deps []int
			var ids []string
			for b := 0; b < 8; b++ {
				if ops[i+1]&(1<<b) != 0 {
					deps = append(deps, b+1)
					ids = append(ids, FormatTaskID(uint64(b+1)))
				}
			}
			want := g.wouldCycle(task, deps)
			err := setDepsOf(fx, FormatTaskID(uint64(task)), ids...)
			if !want {
				if err != nil {
					t.Fatalf("T-%d ← %v refused: %v", task, deps, err)
				}
				g[task] = deps
				continue
			}
			e, ok := err.(*errs.Error)
			if !ok || e.Code != errs.CircularDependency {
				t.Fatalf("T-%d ← %v: want a cycle refusal, got %v", task, deps, err)
			}
			loop := e.Details["cycle"].([]string)
			if loop[0] != FormatTaskID(uint64(task)) {
				t.Fatalf("loop %v does not start at T-%d", loop, task)
			}
			// Each member waits on the next, the last on the first: the
			// first edge is a new dependency, the rest are stored edges.
			for k := range loop {
				a, _ := ParseTaskID(loop[k])
				b, _ := ParseTaskID(loop[(k+1)%len(loop)])
				edges := g[int(a)]
				if k == 0 {
					edges = deps
				}
				if !slices.Contains(edges, int(b)) {
					t.Fatalf("loop %v: %s does not wait on %s", loop, loop[k], loop[(k+1)%len(loop)])
				}
			}
		}
	})
}

// refTask is the reference model of a task for next-actions checks.
type refTask struct {
	num      uint64
	status   string
	priority uint8
	parent   uint64
	deps     []uint64
}

// refNext computes task_next_actions from the model: D10's order over the
// todo tasks whose dependencies are all done or cancelled.
func refNext(model []*refTask, limit int) (next []string, unmet []int, waiting map[string][]string) {
	open := func(n uint64) bool {
		s := model[n-1].status
		return s != StatusDone && s != StatusCancelled
	}
	type c struct {
		t     *refTask
		unmet int
	}
	var cs []c
	waiting = map[string][]string{}
	for _, t := range model {
		if t.status != StatusTodo {
			continue
		}
		var w []string
		for _, d := range t.deps {
			if open(d) {
				w = append(w, FormatTaskID(d))
			}
		}
		if len(w) > 0 {
			waiting[FormatTaskID(t.num)] = w
			continue
		}
		n := 0
		for _, o := range model {
			if o.parent == t.num && open(o.num) {
				n++
			}
		}
		cs = append(cs, c{t, n})
	}
	slices.SortStableFunc(cs, func(a, b c) int {
		if a.t.priority != b.t.priority {
			return int(b.t.priority) - int(a.t.priority)
		}
		if a.unmet != b.unmet {
			return a.unmet - b.unmet
		}
		return int(a.t.num) - int(b.t.num) // created_at follows the number here
	})
	for _, x := range cs[:min(limit, len(cs))] {
		next = append(next, FormatTaskID(x.t.num))
		unmet = append(unmet, x.unmet)
	}
	return next, unmet, waiting
}

// Random graphs and random moves: task_next_actions (order, counts and the
// waiting list) always equals the reference.
func TestNextActionsMatchReference(t *testing.T) { pgtest.EachStore(t, testNextActionsMatchReference) }

func testNextActionsMatchReference(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			f := newFixture(t, "alpha")
			var model []*refTask
			for i := 0; i < 30; i++ {
				in := CreateInput{Title: fmt.Sprint("t", i), Project: "alpha", Priority: ptr(Priorities[rng.IntN(4)])}
				rt := &refTask{num: uint64(i + 1), status: StatusBacklog, priority: priorityCode(*in.Priority)}
				if i > 0 && rng.IntN(3) == 0 {
					rt.parent = uint64(1 + rng.IntN(i))
					in.ParentID = ptr(FormatTaskID(rt.parent))
				}
				// Dependencies on earlier tasks can never form a loop.
				for k := 0; i > 0 && k < rng.IntN(3); k++ {
					d := uint64(1 + rng.IntN(i))
					if !slices.Contains(rt.deps, d) {
						rt.deps = append(rt.deps, d)
						in.DependsOn = append(in.DependsOn, FormatTaskID(d))
					}
				}
				f.create(t, in)
				model = append(model, rt)
			}
			for step := 0; step < 150; step++ {
				rt := model[rng.IntN(len(model))]
				id := FormatTaskID(rt.num)
				switch rng.IntN(4) {
				case 0, 1: // a random legal move
					next := AllowedTransitions(rt.status)
					if len(next) == 0 {
						continue
					}
					to := next[rng.IntN(len(next))]
					u := UpdateInput{TaskID: id, Status: &to}
					if to == StatusBlocked {
						u.BlockedReason = ptr("r")
					}
					f.update(t, u)
					rt.status = to
				case 2:
					p := Priorities[rng.IntN(4)]
					f.update(t, UpdateInput{TaskID: id, Priority: &p})
					rt.priority = priorityCode(p)
				case 3: // new dependencies, refused when they would loop
					var deps []uint64
					var ids []string
					for k := 0; k < rng.IntN(3); k++ {
						d := uint64(1 + rng.IntN(len(model)))
						if !slices.Contains(deps, d) {
							deps = append(deps, d)
							ids = append(ids, FormatTaskID(d))
						}
					}
					g := refGraph{}
					for _, m := range model {
						for _, d := range m.deps {
							g[int(m.num)] = append(g[int(m.num)], int(d))
						}
					}
					var ints []int
					for _, d := range deps {
						ints = append(ints, int(d))
					}
					err := setDepsOf(f, id, ids...)
					if g.wouldCycle(int(rt.num), ints) != (err != nil) {
						t.Fatalf("step %d: %s ← %v: err %v", step, id, ids, err)
					}
					if err == nil {
						slices.Sort(deps)
						rt.deps = deps
					}
				}
				limit := 1 + rng.IntN(30)
				out, err := f.svc.NextActions(NextInput{Project: "alpha", Limit: &limit, IncludeBlocked: ptr(true)})
				if err != nil {
					t.Fatal(err)
				}
				wantNext, wantUnmet, wantWaiting := refNext(model, limit)
				var got []string
				var gotUnmet []int
				for _, n := range out.NextActions {
					got = append(got, n.TaskID)
					gotUnmet = append(gotUnmet, n.DependenciesUnmet)
				}
				if !slices.Equal(got, wantNext) || !slices.Equal(gotUnmet, wantUnmet) {
					t.Fatalf("step %d: next %v %v, want %v %v", step, got, gotUnmet, wantNext, wantUnmet)
				}
				nWaiting := 0
				for _, b := range out.Blocked {
					if b.WaitingOn == nil {
						if model[mustNum(b.TaskID)-1].status != StatusBlocked {
							t.Fatalf("step %d: %s listed blocked", step, b.TaskID)
						}
						continue
					}
					nWaiting++
					if !slices.Equal(b.WaitingOn, wantWaiting[b.TaskID]) {
						t.Fatalf("step %d: %s waits on %v, want %v", step, b.TaskID, b.WaitingOn, wantWaiting[b.TaskID])
					}
				}
				if nWaiting != len(wantWaiting) {
					t.Fatalf("step %d: %d waiting, want %d", step, nWaiting, len(wantWaiting))
				}
			}
		})
	}
}

func mustNum(id string) uint64 {
	n, _ := ParseTaskID(id)
	return n
}
