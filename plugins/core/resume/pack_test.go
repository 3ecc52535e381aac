package resume

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// parts builds n tasks with three decisions each (newest first), one lease
// per task and five next actions; pad sets each decision's content size.
func parts(n, pad int) Parts {
	p := Parts{Agent: "agent-1", Project: "web", OpenTasks: n}
	for i := 1; i <= n; i++ {
		id := tasks.FormatTaskID(uint64(i))
		t := Task{MineTask: tasks.MineTask{TaskID: id, Title: fmt.Sprintf("task %d", i), Project: "web", Status: "in_progress", Priority: "high", Claimed: true, UpdatedAt: "2026-11-27T02:00:00Z"}, Trail: trailURI + id}
		for d := 3; d >= 1; d-- {
			t.Decisions = append(t.Decisions, Decision{ThoughtID: fmt.Sprintf("Θ-%d-%d", i, d), Type: "decision", Content: fmt.Sprintf("decision %d of %s ", d, id) + strings.Repeat("x", pad), RecordedAt: "2026-11-27T02:00:00Z"})
		}
		p.Tasks = append(p.Tasks, t)
		p.Leases = append(p.Leases, leases.Lease{LeaseID: fmt.Sprintf("L-%d", i), TaskID: id, ExpiresAt: "2026-11-27T03:00:00Z"})
	}
	for i := 0; i < 5; i++ {
		p.NextActions = append(p.NextActions, tasks.NextAction{TaskID: tasks.FormatTaskID(uint64(100 + i)), Title: "ready", Priority: "normal", Assignee: "unassigned"})
	}
	return p
}

func TestPackBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name             string
		p                Parts
		max              int
		wantTasks        int
		wantAllDecisions bool
		wantLinks        []string
		wantOmitted      Omitted
	}{
		{name: "everything fits", p: parts(2, 10), max: DefaultMaxBytes, wantTasks: 2, wantAllDecisions: true},
		{name: "older decisions give way", p: parts(2, 600), max: 2200, wantTasks: 2,
			wantLinks: []string{"cairn://trail/T-1", "cairn://trail/T-2"}},
		{name: "tasks beyond the budget are linked", p: parts(12, 200), max: 1500,
			wantLinks: []string{"cairn://tasks/T-12"}},
		{name: "the smallest budget still answers", p: parts(5, 300), max: MinMaxBytes},
		{name: "no tasks", p: Parts{Agent: "nobody"}, max: MinMaxBytes, wantAllDecisions: true},
		{name: "open tasks beyond the list are counted", p: func() Parts { p := parts(1, 10); p.OpenTasks = 60; return p }(), max: DefaultMaxBytes, wantTasks: 1,
			wantOmitted: Omitted{Tasks: 59}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Pack(c.p, c.max)
			raw, err := json.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > c.max {
				t.Fatalf("brief is %d bytes, over its budget of %d", len(raw), c.max)
			}
			if b.Bytes != len(raw) {
				t.Fatalf("bytes says %d, the brief is %d", b.Bytes, len(raw))
			}
			if c.wantTasks > 0 && len(b.Tasks) != c.wantTasks {
				t.Fatalf("%d tasks, want %d: %s", len(b.Tasks), c.wantTasks, raw)
			}
			// Most important first: the brief keeps the input's order, and
			// every task shown has its newest decision.
			for i, tk := range b.Tasks {
				if i > 0 && tk.TaskID <= b.Tasks[i-1].TaskID && len(tk.TaskID) <= len(b.Tasks[i-1].TaskID) {
					t.Fatalf("tasks out of order: %s after %s", tk.TaskID, b.Tasks[i-1].TaskID)
				}
				if len(tk.Decisions) == 0 || !strings.HasSuffix(tk.Decisions[0].ThoughtID, "-3") {
					t.Fatalf("%s lacks its newest decision first: %+v", tk.TaskID, tk.Decisions)
				}
			}
			shown := len(b.Tasks)
			if shown+b.Omitted.Tasks != c.p.OpenTasks {
				t.Fatalf("%d shown + %d omitted tasks, want %d", shown, b.Omitted.Tasks, c.p.OpenTasks)
			}
			all := true
			for _, tk := range b.Tasks {
				all = all && len(tk.Decisions) == 3
			}
			if all != c.wantAllDecisions && c.wantAllDecisions {
				t.Fatalf("not every decision shown: %s", raw)
			}
			if !c.wantAllDecisions && shown > 0 && all && c.wantOmitted.Tasks == 0 {
				t.Fatalf("every decision shown within %d bytes; the case means to squeeze", c.max)
			}
			for _, l := range c.wantLinks {
				if !strings.Contains(string(raw), `"`+l+`"`) {
					t.Fatalf("link %s missing: %s", l, b.Omitted.Links)
				}
			}
			if c.wantOmitted.Tasks > 0 && b.Omitted.Tasks != c.wantOmitted.Tasks {
				t.Fatalf("omitted tasks %d, want %d", b.Omitted.Tasks, c.wantOmitted.Tasks)
			}
			if len(b.Leases)+b.Omitted.Leases != len(c.p.Leases) || len(b.NextActions)+b.Omitted.NextActions != len(c.p.NextActions) {
				t.Fatalf("leases or next actions lost without a count: %s", raw)
			}
		})
	}
}
