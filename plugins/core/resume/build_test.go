package resume

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// fixture is a store with the services that write what a brief reads.
type fixture struct {
	Sources
	Tasks *tasks.Service
	Audit *audit.Service
}

func open(t testing.TB) fixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "core.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	aud := audit.New(st, audit.Config{})
	svc := tasks.New(st, tasks.Config{OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail})
	if _, err := svc.AddProject("web"); err != nil {
		t.Fatal(err)
	}
	return fixture{Sources: Sources{Store: st}, Tasks: svc, Audit: aud}
}

func ptr[T any](v T) *T { return &v }

// claimed creates a task in web and claims it for agent.
func claimed(t testing.TB, src fixture, agent, title, priority string) string {
	t.Helper()
	out, err := src.Tasks.Create("lead", tasks.CreateInput{Title: title, Project: "web", Priority: ptr(priority)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tasks.Update("lead", tasks.UpdateInput{TaskID: out.TaskID, Status: ptr("todo")}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tasks.Update(agent, tasks.UpdateInput{TaskID: out.TaskID, Claim: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	return out.TaskID
}

func lease(t testing.TB, src fixture, typ, id, task string, expires time.Time) {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"leaseId": id, "taskId": task, "scope": []string{"src/"}, "expiresAt": expires.UTC().Format(time.RFC3339Nano)})
	if err := leases.Apply(src.Store, typ, data, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// The brief of an agent: its claimed tasks, critical first, each with its
// newest decisions and blockers; its open leases (not the expired or
// returned ones, nor another agent's); unmet dependencies; next actions.
func TestBuild(t *testing.T) {
	t.Parallel()
	src := open(t)
	low := claimed(t, src, "agent-a", "write docs", "low")
	crit := claimed(t, src, "agent-a", "fix login", "critical")
	other := claimed(t, src, "agent-b", "someone else's", "high")
	for i := 1; i <= 4; i++ {
		in := audit.RecordInput{TaskID: crit, Type: "decision", Content: fmt.Sprintf("login decision %d", i)}
		if i == 2 {
			in.Type, in.Blockers = "blockers", []string{"needs the OAuth secret"}
		}
		if _, err := src.Audit.Record("agent-a", in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Audit.Record("agent-a", audit.RecordInput{TaskID: low, Type: "reflection", Content: strings.Repeat("long ", 200)}); err != nil {
		t.Fatal(err)
	}
	dep, err := src.Tasks.Create("lead", tasks.CreateInput{Title: "api first", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tasks.Update("lead", tasks.UpdateInput{TaskID: dep.TaskID, Status: ptr("todo")}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Tasks.Update("lead", tasks.UpdateInput{TaskID: low, DependsOn: &[]string{dep.TaskID}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	lease(t, src, leases.EventIssued, "L-1", crit, now.Add(time.Hour))
	lease(t, src, leases.EventIssued, "L-2", crit, now.Add(-time.Minute)) // expired
	lease(t, src, leases.EventIssued, "L-3", low, now.Add(time.Hour))
	lease(t, src, leases.EventReturned, "L-3", low, now.Add(time.Hour)) // returned
	lease(t, src, leases.EventIssued, "L-4", other, now.Add(time.Hour))

	b, err := Build(src.Sources, Input{Agent: "agent-a", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	if len(raw) > DefaultMaxBytes || b.Bytes != len(raw) || b.MaxBytes != DefaultMaxBytes {
		t.Fatalf("brief of %d bytes (says %d) within %d: %s", len(raw), b.Bytes, b.MaxBytes, raw)
	}
	if len(b.Tasks) != 2 || b.Tasks[0].TaskID != crit || b.Tasks[1].TaskID != low {
		t.Fatalf("tasks %+v, want %s then %s", b.Tasks, crit, low)
	}
	c := b.Tasks[0]
	if !c.Claimed || len(c.Decisions) != DecisionsPerTask || c.Decisions[0].Content != "login decision 4" || c.Decisions[2].Content != "login decision 2" {
		t.Fatalf("critical task's decisions: %+v", c.Decisions)
	}
	if len(c.Blockers) != 1 || c.Blockers[0] != "needs the OAuth secret" {
		t.Fatalf("blockers %v", c.Blockers)
	}
	l := b.Tasks[1]
	if len(l.WaitingOn) != 1 || l.WaitingOn[0] != dep.TaskID || len([]rune(l.Decisions[0].Content)) != ContentRunes {
		t.Fatalf("low task: waiting on %v, decision of %d runes", l.WaitingOn, len([]rune(l.Decisions[0].Content)))
	}
	if len(b.Leases) != 1 || b.Leases[0].LeaseID != "L-1" {
		t.Fatalf("leases %+v, want only L-1", b.Leases)
	}
	if len(b.NextActions) != 1 || b.NextActions[0].TaskID != dep.TaskID {
		t.Fatalf("next actions %+v", b.NextActions)
	}

	// A tight budget keeps the most important first and links the rest.
	small, err := Build(src.Sources, Input{Agent: "agent-a", Project: "web", MaxBytes: ptr(MinMaxBytes)})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(small); len(raw) > MinMaxBytes {
		t.Fatalf("brief of %d bytes over %d", len(raw), MinMaxBytes)
	}
	if len(small.Tasks) < 1 || small.Tasks[0].TaskID != crit || len(small.Omitted.Links) == 0 {
		t.Fatalf("tight brief: %+v", small)
	}

	// An agent with nothing gets an empty brief; a budget out of bounds
	// is refused naming max_bytes.
	if b, err := Build(src.Sources, Input{Agent: "idle"}); err != nil || len(b.Tasks) != 0 {
		t.Fatalf("idle agent: %+v %v", b, err)
	}
	for _, n := range []int{MinMaxBytes - 1, MaxMaxBytes + 1} {
		_, err := Build(src.Sources, Input{Agent: "agent-a", MaxBytes: ptr(n)})
		if e, ok := errs.As(err); !ok || e.Status != 400 || e.Details["field"] != "max_bytes" {
			t.Fatalf("max_bytes %d: %v", n, err)
		}
	}
}

// TestBuildReadsOneSnapshot: every part of the brief comes from one read
// transaction, so a decision or claim committed while it is built shows in
// all of it or none.
func TestBuildReadsOneSnapshot(t *testing.T) {
	t.Parallel()
	src := open(t)
	for i := 0; i < 3; i++ {
		id := claimed(t, src, "agent-a", fmt.Sprintf("task %d", i), "high")
		if _, err := src.Audit.Record("agent-a", audit.RecordInput{TaskID: id, Type: "decision", Content: "went left"}); err != nil {
			t.Fatal(err)
		}
	}
	before := src.Store.Views()
	b, err := Build(src.Sources, Input{Agent: "agent-a", Project: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tasks) != 3 {
		t.Fatalf("brief has %d tasks, want 3", len(b.Tasks))
	}
	if n := src.Store.Views() - before; n != 1 {
		t.Fatalf("Build took %d read transactions, want 1", n)
	}
}
