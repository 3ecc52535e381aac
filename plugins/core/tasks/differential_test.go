package tasks

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// The randomized differential test of task_list and task_next_actions:
// thousands of random queries, with tasks created, updated and moved
// between them, answered by the service and by a plain in-memory reference
// that applies D9 and D10 literally. They must agree exactly, order
// included. The reference keeps every task as task_get shows it, so
// timestamps come from the service; filtering, searching, sorting and
// paging are the reference's own.

var diffVocab = []string{"login", "Cache", "parser", "STORE", "metrics", "Straße", "Ünïcode", "deploy", "log", "ache", "x"}

type diffModel struct {
	tasks map[string]Task
	order []string // ids in creation order
}

func (m *diffModel) list(in ListInput) ListOutput {
	terms := strings.Fields(strings.ToLower(str(in.Search)))
	var after, before *time.Time
	if s := str(in.CreatedAfter); s != "" {
		t, _ := time.Parse(time.RFC3339Nano, s)
		after = &t
	}
	if s := str(in.CreatedBefore); s != "" {
		t, _ := time.Parse(time.RFC3339Nano, s)
		before = &t
	}
	var hits []Task
	for _, id := range m.order {
		t := m.tasks[id]
		if p := str(in.Project); p != "" && t.Project != p {
			continue
		}
		if in.Status != nil && !slices.Contains(in.Status, t.Status) {
			continue
		}
		if in.Priority != nil && !slices.Contains(in.Priority, t.Priority) {
			continue
		}
		if a := str(in.Assignee); a != "" && t.Assignee != a {
			continue
		}
		if l := str(in.Label); l != "" && !slices.Contains(t.Labels, l) {
			continue
		}
		created, _ := time.Parse(time.RFC3339Nano, t.CreatedAt)
		if after != nil && !created.After(*after) {
			continue
		}
		if before != nil && !created.Before(*before) {
			continue
		}
		ok := true
		for _, term := range terms {
			if !strings.Contains(strings.ToLower(t.Title), term) && !strings.Contains(strings.ToLower(t.Description), term) {
				ok = false
				break
			}
		}
		if ok {
			hits = append(hits, t)
		}
	}
	sortBy, desc := SortUpdated, true
	if in.SortBy != nil {
		sortBy = *in.SortBy
	}
	if in.SortOrder != nil {
		desc = *in.SortOrder == OrderDesc
	}
	key := func(t Task) float64 {
		switch sortBy {
		case SortCreated:
			c, _ := time.Parse(time.RFC3339Nano, t.CreatedAt)
			return float64(c.UnixMilli())
		case SortPriority:
			return float64(priorityCode(t.Priority))
		case SortProgress:
			return t.Progress
		}
		u, _ := time.Parse(time.RFC3339Nano, t.UpdatedAt)
		return float64(u.UnixMilli())
	}
	slices.SortStableFunc(hits, func(a, b Task) int {
		ka, kb := key(a), key(b)
		if ka != kb {
			if (ka < kb) != desc {
				return -1
			}
			return 1
		}
		return int(mustNum(a.TaskID)) - int(mustNum(b.TaskID))
	})
	limit, offset := DefaultListLimit, 0
	if in.Limit != nil {
		limit = *in.Limit
	}
	if in.Offset != nil {
		offset = *in.Offset
	}
	out := ListOutput{Tasks: []ListItem{}, TotalCount: len(hits), Offset: offset, Limit: limit}
	for _, t := range hits[min(offset, len(hits)):min(offset+limit, len(hits))] {
		out.Tasks = append(out.Tasks, ListItem{TaskID: t.TaskID, Title: t.Title, Project: t.Project, Status: t.Status,
			Priority: t.Priority, Progress: t.Progress, Assignee: t.Assignee, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt})
	}
	out.ReturnedCount = len(out.Tasks)
	return out
}

func randomText(rng *rand.Rand, n int) string {
	var w []string
	for i := 0; i < n; i++ {
		w = append(w, diffVocab[rng.IntN(len(diffVocab))])
	}
	return strings.Join(w, " ")
}

func randomSubset(rng *rand.Rand, from []string) []string {
	if rng.IntN(2) == 0 {
		return nil
	}
	out := []string{}
	for _, s := range from {
		if rng.IntN(3) == 0 {
			out = append(out, s)
		}
	}
	return out
}

func randomListInput(rng *rand.Rand, m *diffModel) ListInput {
	var in ListInput
	projects := []string{"alpha", "beta", "gamma", "nowhere"}
	if rng.IntN(2) == 0 {
		in.Project = ptr(projects[rng.IntN(len(projects))])
	}
	in.Status = randomSubset(rng, Statuses)
	if rng.IntN(3) == 0 {
		in.Priority = randomSubset(rng, Priorities)
	}
	if rng.IntN(4) == 0 {
		in.Assignee = ptr([]string{"unassigned", "ann", "bob"}[rng.IntN(3)])
	}
	if rng.IntN(4) == 0 {
		in.Label = ptr([]string{"ui", "api", "ops"}[rng.IntN(3)])
	}
	if len(m.order) > 0 && rng.IntN(4) == 0 {
		t := m.tasks[m.order[rng.IntN(len(m.order))]]
		c, _ := time.Parse(time.RFC3339Nano, t.CreatedAt)
		c = c.Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
		if rng.IntN(2) == 0 {
			in.CreatedAfter = ptr(FormatTime(c))
		} else {
			in.CreatedBefore = ptr(FormatTime(c))
		}
	}
	if rng.IntN(3) == 0 {
		s := randomText(rng, 1+rng.IntN(2))
		if rng.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		in.Search = ptr(" " + s + " ")
	}
	if rng.IntN(2) == 0 {
		in.Limit = ptr(1 + rng.IntN(20))
	}
	if rng.IntN(2) == 0 {
		in.Offset = ptr(rng.IntN(40))
	}
	if rng.IntN(2) == 0 {
		in.SortBy = ptr(SortKeys[rng.IntN(len(SortKeys))])
	}
	if rng.IntN(2) == 0 {
		in.SortOrder = ptr([]string{OrderAsc, OrderDesc}[rng.IntN(2)])
	}
	if rng.IntN(5) == 0 {
		// One facet and nothing else the indexes do not encode: the
		// plans that page through the sorted index with a filter.
		in.CreatedAfter, in.CreatedBefore, in.Search = nil, nil, nil
		if rng.IntN(2) == 0 {
			in.Assignee, in.Label = ptr([]string{"unassigned", "ann", "bob"}[rng.IntN(3)]), nil
		} else {
			in.Assignee, in.Label = nil, ptr([]string{"ui", "api", "ops"}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			in.Offset, in.Limit = ptr(rng.IntN(3)), ptr(1+rng.IntN(5))
		}
	}
	return in
}

// diffSteps is how many writes the differential test makes; set
// CAIRN_DIFF_STEPS for a long run (thousands of queries per hundred steps).
func diffSteps() int {
	if n, err := strconv.Atoi(os.Getenv("CAIRN_DIFF_STEPS")); err == nil && n > 0 {
		return n
	}
	return 600
}

// next is the reference task_next_actions (D10, D27): the project's todo
// tasks whose dependencies are all done or cancelled, by priority desc,
// open sub-tasks asc, created asc, number asc; with includeBlocked, the
// blocked tasks then the waiting ones, each in number order.
func (m *diffModel) next(project string, limit int, includeBlocked bool) NextOutput {
	open := func(id string) bool {
		s := m.tasks[id].Status
		return s != StatusDone && s != StatusCancelled
	}
	kids := map[string]int{}
	for _, id := range m.order {
		if t := m.tasks[id]; t.ParentID != "" && open(id) {
			kids[t.ParentID]++
		}
	}
	out := NextOutput{NextActions: []NextAction{}, Project: project}
	var ready []Task
	var waiting []BlockedTask
	for _, id := range m.order {
		t := m.tasks[id]
		if t.Project != project || t.Status != StatusTodo {
			continue
		}
		var openDeps []string
		for _, d := range t.DependsOn {
			if open(d) {
				openDeps = append(openDeps, d)
			}
		}
		if len(openDeps) > 0 {
			waiting = append(waiting, BlockedTask{TaskID: id, Title: t.Title, BlockedReason: "waiting on " + strings.Join(openDeps, ", "), WaitingOn: openDeps})
			continue
		}
		ready = append(ready, t)
	}
	slices.SortStableFunc(ready, func(a, b Task) int {
		if pa, pb := priorityCode(a.Priority), priorityCode(b.Priority); pa != pb {
			return int(pb) - int(pa)
		}
		if ka, kb := kids[a.TaskID], kids[b.TaskID]; ka != kb {
			return ka - kb
		}
		return strings.Compare(a.CreatedAt, b.CreatedAt) // same layout and width: text order is time order
	})
	for _, t := range ready[:min(limit, len(ready))] {
		out.NextActions = append(out.NextActions, NextAction{TaskID: t.TaskID, Title: t.Title, Priority: t.Priority, Assignee: t.Assignee,
			EstimateHours: t.EstimateHours, ParentID: t.ParentID, DependenciesUnmet: kids[t.TaskID]})
	}
	out.Count = len(out.NextActions)
	if includeBlocked {
		out.Blocked = []BlockedTask{}
		for _, id := range m.order {
			if t := m.tasks[id]; t.Project == project && t.Status == StatusBlocked {
				out.Blocked = append(out.Blocked, BlockedTask{TaskID: id, Title: t.Title, BlockedReason: t.BlockedReason})
			}
		}
		out.Blocked = append(out.Blocked, waiting...)
	}
	if out.Count == 0 {
		// The reference counts by status; the hint's words are the service's.
		e := &EmptyBecause{WaitingOnDependencies: len(waiting)}
		for _, id := range m.order {
			t := m.tasks[id]
			if t.Project != project {
				continue
			}
			switch t.Status {
			case StatusBacklog:
				e.Backlog++
			case StatusBlocked:
				e.Blocked++
			case StatusReview:
				e.InReview++
			case StatusInProgress:
				e.InProgress++
				if t.ClaimedBy != "" && t.ClaimedBy != UnknownActor {
					e.ClaimedByOthers++
				}
			}
		}
		e.Hint = e.hint()
		out.EmptyBecause = e
	}
	return out
}

// earlierOf picks up to n distinct tasks of project created before id (so
// dependencies on them can never close a loop).
func (m *diffModel) earlierOf(rng *rand.Rand, project string, before int, n int) []string {
	var out []string
	for k := 0; k < n && before > 0; k++ {
		d := m.order[rng.IntN(before)]
		if m.tasks[d].Project == project && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func TestListAndNextActionsDifferential(t *testing.T) {
	pgtest.EachStore(t, testListAndNextActionsDifferential)
}

func testListAndNextActionsDifferential(t *testing.T) {
	saved, savedCap := lockstepSteps, searchTotalCap
	defer func() { lockstepSteps, searchTotalCap, stopCounting = saved, savedCap, searchCapCheaper }()
	rng := rand.New(rand.NewPCG(7, 11))
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f := newFixture(t, "alpha", "beta", "gamma")
	// A clock that often stands still, so sort keys tie and the task
	// number must break the ties.
	f.svc.cfg.Clock = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
		return now
	}
	m := &diffModel{tasks: map[string]Task{}}
	refresh := func(id string) {
		m.tasks[id] = f.get(t, id)
	}
	projects := []string{"alpha", "beta", "gamma"}
	actors := []string{"ann", "bob"}
	queries, capped := 0, 0
	plans := map[listPlan]int{}
	for step := 0; step < diffSteps(); step++ {
		switch op := rng.IntN(12); {
		case op < 3 || len(m.order) < 5:
			in := CreateInput{Title: randomText(rng, 1+rng.IntN(3)), Project: projects[rng.IntN(3)],
				Priority: ptr(Priorities[rng.IntN(4)])}
			if rng.IntN(2) == 0 {
				in.Description = ptr(randomText(rng, rng.IntN(6)))
			}
			if rng.IntN(2) == 0 {
				in.Labels = randomSubset(rng, []string{"ui", "api", "ops"})
			}
			if rng.IntN(3) == 0 {
				in.Assignee = ptr(actors[rng.IntN(2)])
			}
			if rng.IntN(4) == 0 {
				if p := m.earlierOf(rng, in.Project, len(m.order), 1); len(p) == 1 {
					in.ParentID = &p[0]
				}
			}
			if rng.IntN(4) == 0 {
				in.DependsOn = m.earlierOf(rng, in.Project, len(m.order), 1+rng.IntN(2))
			}
			id := f.create(t, in).TaskID
			m.order = append(m.order, id)
			if in.ParentID != nil {
				refresh(*in.ParentID)
			}
			refresh(id)
		case op == 3: // claim the first ready task of a project, or a given task
			c := Call{Actor: actors[rng.IntN(2)]}
			if rng.IntN(2) == 0 {
				if out, err := f.svc.NextActionsFor(c, NextInput{Project: projects[rng.IntN(3)], Claim: ptr(true)}); err == nil && out.Claimed != "" {
					refresh(out.Claimed)
				}
			} else {
				id := m.order[rng.IntN(len(m.order))]
				_, _ = f.svc.UpdateFor(c, UpdateInput{TaskID: id, Claim: ptr(true)})
				refresh(id)
			}
		case op == 4: // a release, by the holder or not
			id := m.order[rng.IntN(len(m.order))]
			_, _ = f.svc.UpdateFor(Call{Actor: actors[rng.IntN(2)]}, UpdateInput{TaskID: id, Release: ptr(true)})
			refresh(id)
		default:
			i := rng.IntN(len(m.order))
			id := m.order[i]
			cur := m.tasks[id]
			u := UpdateInput{TaskID: id}
			if next := AllowedTransitions(cur.Status); len(next) > 0 && rng.IntN(2) == 0 {
				u.Status = ptr(next[rng.IntN(len(next))])
				if *u.Status == StatusBlocked {
					u.BlockedReason = ptr("r")
				}
			}
			if rng.IntN(3) == 0 {
				u.Progress = ptr(float64(rng.IntN(5) * 25))
			}
			if rng.IntN(4) == 0 {
				u.Priority = ptr(Priorities[rng.IntN(4)])
			}
			if rng.IntN(5) == 0 {
				u.Description = ptr(randomText(rng, rng.IntN(4)))
			}
			if rng.IntN(5) == 0 {
				u.Assignee = ptr([]string{"", "ann", "bob"}[rng.IntN(3)])
			}
			if rng.IntN(5) == 0 {
				l := randomSubset(rng, []string{"ui", "api", "ops"})
				if l == nil {
					l = []string{}
				}
				u.Labels = &l
			}
			if rng.IntN(6) == 0 {
				d := m.earlierOf(rng, cur.Project, i, rng.IntN(3))
				if d == nil {
					d = []string{}
				}
				u.DependsOn = &d
			}
			f.update(t, u)
			refresh(id)
		}
		for q := 0; q < 8; q++ {
			in := randomListInput(rng, m)
			if q == 0 {
				// A search alone, of terms of three bytes or more: the
				// plan that may stop counting (total_capped).
				in.Project, in.Status, in.Priority, in.Assignee, in.Label, in.CreatedAfter, in.CreatedBefore = nil, nil, nil, nil, nil, nil, nil
				var terms []string
				for len(terms) < 1+rng.IntN(2) {
					if w := diffVocab[rng.IntN(len(diffVocab))]; len(w) >= 3 {
						terms = append(terms, w)
					}
				}
				in.Search = ptr(strings.Join(terms, " "))
				in.Limit, in.Offset = ptr(1+rng.IntN(5)), ptr(rng.IntN(4))
			}
			// Searches take both ways of choosing trigram candidates: the
			// whole lockstep, and the early guess by density.
			lockstepSteps = []int{1, 4, 512}[rng.IntN(3)]
			// A search may stop counting past the cap (total_capped): a
			// small cap takes that path on this small store.
			searchTotalCap = []int{1, 3, 1000}[rng.IntN(3)]
			stopCounting = searchCapCheaper
			if rng.IntN(2) == 0 {
				stopCounting = func(kv.Tx, *listQuery, []uint64) bool { return true }
			}
			got, err := f.svc.List(in)
			if err != nil {
				t.Fatalf("step %d: List(%s): %v", step, describe(in), err)
			}
			want := m.list(in)
			wantTotal := want.TotalCount
			if got.TotalCapped {
				// A lower bound, with more matches than it says.
				capped++
				if bound := max(searchTotalCap, got.Offset+got.Limit); got.TotalCount != bound || want.TotalCount <= bound {
					t.Fatalf("step %d: List(%s) capped its total at %d, want %d with %d matches", step, describe(in), got.TotalCount, bound, want.TotalCount)
				}
				wantTotal = got.TotalCount
			}
			if !slices.Equal(got.Tasks, want.Tasks) || got.TotalCount != wantTotal || got.ReturnedCount != want.ReturnedCount ||
				got.Offset != want.Offset || got.Limit != want.Limit {
				t.Fatalf("step %d: List(%s)\n got %d %v\nwant %d %v", step, describe(in), got.TotalCount, ids(got.Tasks), want.TotalCount, ids(want.Tasks))
			}
			queries++
			if q, err := in.validate(); err == nil {
				_ = f.st.View(func(tx kv.Tx) error {
					plan, _ := choosePlan(tx, q)
					plans[plan]++
					return nil
				})
			}
		}
		for q := 0; q < 2; q++ {
			p := projects[rng.IntN(3)]
			limit := 1 + rng.IntN(10)
			blocked := rng.IntN(2) == 0
			got, err := f.svc.NextActions(NextInput{Project: p, Limit: &limit, IncludeBlocked: &blocked})
			if err != nil {
				t.Fatal(err)
			}
			if want := m.next(p, limit, blocked); !reflect.DeepEqual(got, want) {
				t.Fatalf("step %d: next actions of %s (limit %d, blocked %v)\n got %+v\nwant %+v", step, p, limit, blocked, got, want)
			}
			queries++
		}
	}
	for _, p := range []listPlan{planIndexed, planFacetWalk, planFacetMembers, planScan} {
		if plans[p] < queries/100 {
			t.Fatalf("plan %d taken by %d of %d queries", p, plans[p], queries)
		}
	}
	if capped < queries/100 {
		t.Fatalf("%d of %d queries capped their total", capped, queries)
	}
	t.Logf("%d queries over %d tasks agreed (%d with a capped total); list plans taken: %v", queries, len(m.order), capped, plans)
}

func describe(in ListInput) string {
	var b strings.Builder
	add := func(k string, v any) { fmt.Fprintf(&b, "%s=%v ", k, v) }
	if in.Project != nil {
		add("project", *in.Project)
	}
	if in.Status != nil {
		add("status", in.Status)
	}
	if in.Priority != nil {
		add("priority", in.Priority)
	}
	for k, v := range map[string]*string{"assignee": in.Assignee, "label": in.Label, "after": in.CreatedAfter, "before": in.CreatedBefore, "search": in.Search, "sort": in.SortBy, "order": in.SortOrder} {
		if v != nil {
			add(k, *v)
		}
	}
	if in.Limit != nil {
		add("limit", *in.Limit)
	}
	if in.Offset != nil {
		add("offset", *in.Offset)
	}
	return b.String()
}
