package tasks

import (
	"encoding/json"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func ids(items []ListItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.TaskID
	}
	return out
}

// listFixture: T-1..T-6 with known fields; the clock advances 1 s per write.
func listFixture(t *testing.T) *fixture {
	f := newFixture(t, "alpha", "beta")
	f.create(t, CreateInput{Title: "Fix login bug", Project: "alpha", Priority: ptr(PriorityHigh), Labels: []string{"bug", "auth"}, Assignee: ptr("ann")})             // T-1
	f.create(t, CreateInput{Title: "Write docs", Description: ptr("Document the LOGIN flow"), Project: "alpha", Priority: ptr(PriorityLow), Labels: []string{"docs"}}) // T-2
	f.create(t, CreateInput{Title: "Refactor store", Project: "beta", Priority: ptr(PriorityCritical), Assignee: ptr("ann")})                                          // T-3
	f.create(t, CreateInput{Title: "Add metrics", Project: "alpha"})                                                                                                   // T-4
	f.create(t, CreateInput{Title: "Login page styling", Project: "beta", Labels: []string{"ui"}})                                                                     // T-5
	f.create(t, CreateInput{Title: "Crash on start", Project: "alpha", Priority: ptr(PriorityCritical), Labels: []string{"bug"}})                                      // T-6
	f.update(t, UpdateInput{TaskID: "T-1", Status: ptr(StatusTodo), Progress: ptr(30.0)})
	f.update(t, UpdateInput{TaskID: "T-4", Status: ptr(StatusTodo), Progress: ptr(80.0)})
	f.update(t, UpdateInput{TaskID: "T-4", Status: ptr(StatusInProgress)})
	f.update(t, UpdateInput{TaskID: "T-3", Status: ptr(StatusCancelled)})
	return f
}

func TestListFilters(t *testing.T) { pgtest.EachStore(t, testListFilters) }

func testListFilters(t *testing.T) {
	f := listFixture(t)
	cases := []struct {
		name string
		in   ListInput
		want []string // in default order: updated desc
	}{
		{"all", ListInput{}, []string{"T-3", "T-4", "T-1", "T-6", "T-5", "T-2"}},
		{"project", ListInput{Project: ptr("alpha")}, []string{"T-4", "T-1", "T-6", "T-2"}},
		{"unknown project", ListInput{Project: ptr("gamma")}, []string{}},
		{"status", ListInput{Status: []string{StatusTodo, StatusInProgress}}, []string{"T-4", "T-1"}},
		{"empty status list", ListInput{Status: []string{}}, []string{}},
		{"project+status", ListInput{Project: ptr("alpha"), Status: []string{StatusBacklog}}, []string{"T-6", "T-2"}},
		{"project+status dup", ListInput{Project: ptr("beta"), Status: []string{StatusCancelled, StatusCancelled}}, []string{"T-3"}},
		{"priority", ListInput{Priority: []string{PriorityCritical}}, []string{"T-3", "T-6"}},
		{"priority two", ListInput{Priority: []string{PriorityLow, PriorityHigh}}, []string{"T-1", "T-2"}},
		{"assignee", ListInput{Assignee: ptr("ann")}, []string{"T-3", "T-1"}},
		{"assignee default", ListInput{Assignee: ptr(DefaultAssignee), Project: ptr("beta")}, []string{"T-5"}},
		{"label", ListInput{Label: ptr("bug")}, []string{"T-1", "T-6"}},
		{"label case-sensitive", ListInput{Label: ptr("Bug")}, []string{}},
		{"search title or description", ListInput{Search: ptr("login")}, []string{"T-1", "T-5", "T-2"}},
		{"search every term", ListInput{Search: ptr("LOGIN   flow")}, []string{"T-2"}},
		{"search terms across fields", ListInput{Search: ptr("docs login")}, []string{"T-2"}},
		{"search none", ListInput{Search: ptr("login zebra")}, []string{}},
		{"search blank", ListInput{Search: ptr("   ")}, []string{"T-3", "T-4", "T-1", "T-6", "T-5", "T-2"}},
		// T-n was created at 03:04:(5+n-1).123 (one clock tick per write; AddProject took two).
		{"created_after", ListInput{CreatedAfter: ptr("2026-01-02T03:04:10.123Z")}, []string{"T-6", "T-5"}},
		{"created_before", ListInput{CreatedBefore: ptr("2026-01-02T03:04:09.123Z")}, []string{"T-1", "T-2"}},
		{"created range offset", ListInput{CreatedAfter: ptr("2026-01-02T04:04:08.5+01:00"), CreatedBefore: ptr("2026-01-02T03:04:10.2Z")}, []string{"T-3", "T-4"}},
		{"created_after date", ListInput{CreatedAfter: ptr("2026-01-03")}, []string{}},
		{"combined", ListInput{Project: ptr("alpha"), Label: ptr("bug"), Priority: []string{PriorityCritical}}, []string{"T-6"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := f.svc.List(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(out.Tasks); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			if out.TotalCount != len(c.want) || out.ReturnedCount != len(c.want) || out.Limit != 50 || out.Offset != 0 {
				t.Fatalf("counts %+v", out)
			}
		})
	}
}

func TestListItemShape(t *testing.T) { pgtest.EachStore(t, testListItemShape) }

func testListItemShape(t *testing.T) {
	f := listFixture(t)
	out, err := f.svc.List(ListInput{Project: ptr("alpha"), Status: []string{StatusInProgress}})
	if err != nil || len(out.Tasks) != 1 {
		t.Fatalf("%+v %v", out, err)
	}
	raw, _ := json.Marshal(out)
	want := `{"tasks":[{"task_id":"T-4","title":"Add metrics","project":"alpha","status":"in_progress","priority":"normal","progress":80,"assignee":"unassigned","created_at":"2026-01-02T03:04:10.123Z","updated_at":"2026-01-02T03:04:15.123Z"}],"total_count":1,"returned_count":1,"offset":0,"limit":50}`
	if string(raw) != want {
		t.Fatalf("JSON\n got %s\nwant %s", raw, want)
	}
	empty, _ := f.svc.List(ListInput{Project: ptr("gamma")})
	raw, _ = json.Marshal(empty)
	if !strings.Contains(string(raw), `"tasks":[]`) {
		t.Fatalf("empty list must be []: %s", raw)
	}
}

func TestListSorts(t *testing.T) { pgtest.EachStore(t, testListSorts) }

func testListSorts(t *testing.T) {
	f := listFixture(t)
	cases := []struct {
		by, order string
		want      []string
	}{
		{"", "", []string{"T-3", "T-4", "T-1", "T-6", "T-5", "T-2"}},
		{SortUpdated, OrderAsc, []string{"T-2", "T-5", "T-6", "T-1", "T-4", "T-3"}},
		{SortCreated, OrderAsc, []string{"T-1", "T-2", "T-3", "T-4", "T-5", "T-6"}},
		{SortCreated, OrderDesc, []string{"T-6", "T-5", "T-4", "T-3", "T-2", "T-1"}},
		// Ties (T-3/T-6 critical, T-4/T-5 normal) break on number ascending in both orders.
		{SortPriority, OrderDesc, []string{"T-3", "T-6", "T-1", "T-4", "T-5", "T-2"}},
		{SortPriority, OrderAsc, []string{"T-2", "T-4", "T-5", "T-1", "T-3", "T-6"}},
		{SortProgress, OrderDesc, []string{"T-4", "T-1", "T-2", "T-3", "T-5", "T-6"}},
		{SortProgress, OrderAsc, []string{"T-2", "T-3", "T-5", "T-6", "T-1", "T-4"}},
	}
	for _, c := range cases {
		t.Run(c.by+"_"+c.order, func(t *testing.T) {
			in := ListInput{}
			if c.by != "" {
				in.SortBy = ptr(c.by)
			}
			if c.order != "" {
				in.SortOrder = ptr(c.order)
			}
			out, err := f.svc.List(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(out.Tasks); !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// TestListPagingStable pages through many equal sort keys: pages must not
// overlap or skip, in both orders and with the bounded-selection path.
func TestListPagingStable(t *testing.T) { pgtest.EachStore(t, testListPagingStable) }

func testListPagingStable(t *testing.T) {
	f := newFixture(t, "alpha")
	f.clock.freeze() // every task gets the same created_at and updated_at
	const n = 230
	for i := 0; i < n; i++ {
		p := Priorities[i%4]
		f.create(t, CreateInput{Title: "t", Project: "alpha", Priority: &p})
	}
	for _, sortBy := range SortKeys {
		for _, order := range []string{OrderAsc, OrderDesc} {
			full, err := f.svc.List(ListInput{SortBy: ptr(sortBy), SortOrder: ptr(order), Limit: ptr(500)})
			if err != nil || full.TotalCount != n || full.ReturnedCount != n {
				t.Fatalf("full: %d %d %v", full.TotalCount, full.ReturnedCount, err)
			}
			var paged []string
			for off := 0; off < n+10; off += 7 {
				out, err := f.svc.List(ListInput{SortBy: ptr(sortBy), SortOrder: ptr(order), Limit: ptr(7), Offset: ptr(off)})
				if err != nil {
					t.Fatal(err)
				}
				if out.TotalCount != n || out.Offset != off || out.Limit != 7 || out.ReturnedCount != len(out.Tasks) {
					t.Fatalf("page %d: %+v", off, out)
				}
				paged = append(paged, ids(out.Tasks)...)
			}
			if !slices.Equal(paged, ids(full.Tasks)) {
				t.Fatalf("%s %s: paging differs from the full list", sortBy, order)
			}
		}
	}
	out, _ := f.svc.List(ListInput{SortBy: ptr(SortPriority), Limit: ptr(3)})
	if got := ids(out.Tasks); !slices.Equal(got, []string{"T-4", "T-8", "T-12"}) {
		t.Fatalf("critical first, by number: %v", got)
	}
}

func TestSortHitsSelectionMatchesFullSort(t *testing.T) {
	t.Parallel()
	var hits []hit
	for i := 0; i < 1000; i++ {
		hits = append(hits, hit{num: uint64(i + 1), key: float64((i * 7919) % 13)})
	}
	for _, desc := range []bool{false, true} {
		for _, n := range []int{1, 5, 50, 124, 125, 1000} {
			a, b := slices.Clone(hits), slices.Clone(hits)
			sortHits(a, desc, n)
			sortHits(b, desc, len(b))
			if !slices.Equal(a[:n], b[:n]) {
				t.Fatalf("desc=%v n=%d differs", desc, n)
			}
		}
	}
}

func TestListValidation(t *testing.T) { pgtest.EachStore(t, testListValidation) }

func testListValidation(t *testing.T) {
	f := listFixture(t)
	cases := []struct {
		name       string
		in         ListInput
		field      string
		constraint string
	}{
		{"limit 0", ListInput{Limit: ptr(0)}, "limit", "minimum"},
		{"limit 501", ListInput{Limit: ptr(501)}, "limit", "maximum"},
		{"offset -1", ListInput{Offset: ptr(-1)}, "offset", "minimum"},
		{"status enum", ListInput{Status: []string{StatusTodo, "open"}}, "status[1]", "enum"},
		{"priority enum", ListInput{Priority: []string{"p1"}}, "priority[0]", "enum"},
		{"sort_by", ListInput{SortBy: ptr("title")}, "sort_by", "enum"},
		{"sort_order", ListInput{SortOrder: ptr("up")}, "sort_order", "enum"},
		{"created_after", ListInput{CreatedAfter: ptr("yesterday")}, "created_after", "format"},
		{"created_before", ListInput{CreatedBefore: ptr("2026-13-01")}, "created_before", "format"},
		{"project pattern", ListInput{Project: ptr("Alpha")}, "project", "pattern"},
		{"search utf8", ListInput{Search: ptr("\xff")}, "search", "utf8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.svc.List(c.in)
			wantErr(t, err, 400, errs.InvalidInput, c.field, c.constraint)
		})
	}
	for _, l := range []int{1, 500} {
		out, err := f.svc.List(ListInput{Limit: ptr(l)})
		if err != nil || out.Limit != l {
			t.Fatalf("limit %d: %+v %v", l, out, err)
		}
	}
	out, err := f.svc.List(ListInput{Offset: ptr(100)})
	if err != nil || out.TotalCount != 6 || out.ReturnedCount != 0 || len(out.Tasks) != 0 || out.Offset != 100 {
		t.Fatalf("offset past end: %+v %v", out, err)
	}
}

func TestNextActions(t *testing.T) { pgtest.EachStore(t, testNextActions) }

func testNextActions(t *testing.T) {
	f := newFixture(t, "alpha", "beta")
	todo := func(title, prio string, parent *string, est *float64) string {
		id := f.create(t, CreateInput{Title: title, Project: "alpha", Priority: ptr(prio), ParentID: parent, EstimateHours: est}).TaskID
		f.update(t, UpdateInput{TaskID: id, Status: ptr(StatusTodo)})
		return id
	}
	a := todo("a high, 2 open subtasks", PriorityHigh, nil, nil)                              // T-1
	b := todo("b high, 0 open subtasks", PriorityHigh, nil, ptr(3.0))                         // T-2
	c := todo("c normal", PriorityNormal, nil, nil)                                           // T-3
	d := todo("d critical child of a", PriorityCritical, ptr(a), nil)                         // T-4 (open child of a)
	e := todo("e high, 1 done subtask", PriorityHigh, nil, nil)                               // T-5
	f.create(t, CreateInput{Title: "backlog child of a", Project: "alpha", ParentID: ptr(a)}) // T-6 (open child of a)
	done := f.create(t, CreateInput{Title: "done child of e", Project: "alpha", ParentID: ptr(e)}).TaskID
	for _, s := range pathTo(StatusDone) {
		s.TaskID = done
		f.update(t, s)
	}
	cancelled := f.create(t, CreateInput{Title: "cancelled child of b", Project: "alpha", ParentID: ptr(b)}).TaskID
	f.update(t, UpdateInput{TaskID: cancelled, Status: ptr(StatusCancelled)})
	blocked := f.taskIn(t, "alpha", StatusBlocked)
	f.taskIn(t, "alpha", StatusInProgress)
	f.taskIn(t, "beta", StatusTodo)

	out, err := f.svc.NextActions(NextInput{Project: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range out.NextActions {
		got = append(got, n.TaskID)
	}
	// critical d; high with 0 unmet b and e (b created first); high a with 2; normal c.
	if want := []string{d, b, e, a, c}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if out.Count != 5 || out.Project != "alpha" || out.Blocked != nil {
		t.Fatalf("output %+v", out)
	}
	if out.NextActions[3].DependenciesUnmet != 2 || out.NextActions[2].DependenciesUnmet != 0 || out.NextActions[0].ParentID != a ||
		out.NextActions[1].EstimateHours == nil || *out.NextActions[1].EstimateHours != 3 {
		t.Fatalf("items %+v", out.NextActions)
	}
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), "blocked") {
		t.Fatalf("blocked listed without include_blocked: %s", raw)
	}
	if !strings.HasPrefix(string(raw), `{"next_actions":[{"task_id":"T-4","title":"d critical child of a","priority":"critical","assignee":"unassigned","parent_id":"T-1","dependencies_unmet":0}`) {
		t.Fatalf("JSON %s", raw)
	}

	// Finishing a's children leaves it with no unmet dependencies.
	f.update(t, UpdateInput{TaskID: "T-6", Status: ptr(StatusCancelled)})
	for _, s := range pathTo(StatusDone)[1:] {
		s.TaskID = d
		f.update(t, s)
	}
	out, _ = f.svc.NextActions(NextInput{Project: "alpha", Limit: ptr(2), IncludeBlocked: ptr(true)})
	if len(out.NextActions) != 2 || out.NextActions[0].TaskID != a || out.NextActions[1].TaskID != b || out.Count != 2 {
		t.Fatalf("after finishing subtasks: %+v", out)
	}
	if len(out.Blocked) != 1 || out.Blocked[0].TaskID != blocked || out.Blocked[0].BlockedReason == "" {
		t.Fatalf("blocked %+v", out.Blocked)
	}

	empty, err := f.svc.NextActions(NextInput{Project: "beta", IncludeBlocked: ptr(true)})
	if err != nil || empty.Count != 1 || empty.Blocked == nil || len(empty.Blocked) != 0 {
		t.Fatalf("beta: %+v %v", empty, err)
	}
	raw, _ = json.Marshal(empty)
	if !strings.Contains(string(raw), `"blocked":[]`) {
		t.Fatalf("requested blocked list must show even empty: %s", raw)
	}
}

func TestNextActionsValidation(t *testing.T) { pgtest.EachStore(t, testNextActionsValidation) }

func testNextActionsValidation(t *testing.T) {
	f := newFixture(t, "alpha")
	for i := 0; i < 105; i++ {
		f.taskIn(t, "alpha", StatusTodo)
	}
	for _, c := range []struct {
		limit, want int
	}{{1, 1}, {100, 100}} {
		out, err := f.svc.NextActions(NextInput{Project: "alpha", Limit: ptr(c.limit)})
		if err != nil || out.Count != c.want {
			t.Fatalf("limit %d: %d %v", c.limit, out.Count, err)
		}
	}
	out, _ := f.svc.NextActions(NextInput{Project: "alpha"})
	if out.Count != DefaultNextLimit {
		t.Fatalf("default limit gave %d", out.Count)
	}
	_, err := f.svc.NextActions(NextInput{Project: "alpha", Limit: ptr(101)})
	wantErr(t, err, 400, errs.InvalidInput, "limit", "maximum")
	_, err = f.svc.NextActions(NextInput{Project: "alpha", Limit: ptr(0)})
	wantErr(t, err, 400, errs.InvalidInput, "limit", "minimum")
	_, err = f.svc.NextActions(NextInput{Project: "gamma"})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "exists")
	_, err = f.svc.NextActions(NextInput{})
	wantErr(t, err, 404, errs.ProjectNotFound, "project", "exists")
	_, err = f.svc.NextActions(NextInput{Project: "NOPE"})
	wantErr(t, err, 400, errs.InvalidInput, "project", "pattern")
}

func TestContainsFold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text, term string
		want       bool
	}{
		{"Fix LOGIN bug", "login", true},
		{"Fix LOGIN bug", "logout", false},
		{"abc", "abcd", false},
		{"anything", "", true},
		{"Résumé de l'ÉTÉ", "été", true},
		{"Résumé", "resume", false},
		{"plain", "é", false},
	} {
		if got := containsFold([]byte(c.text), c.term); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.text, c.term, got)
		}
	}
	f := newFixture(t, "alpha")
	f.create(t, CreateInput{Title: "Übersicht", Description: ptr("Notes for l'ÉTÉ"), Project: "alpha"})
	out, err := f.svc.List(ListInput{Search: ptr("übersicht été")})
	if err != nil || out.TotalCount != 1 {
		t.Fatalf("unicode search: %+v %v", out, err)
	}
}
