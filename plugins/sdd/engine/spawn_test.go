package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func stepsString(steps []PlanStep) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%d:%s/%s/%s", s.Order, s.Agent, s.Stage, s.Mode))
	}
	return strings.Join(parts, " ")
}

func TestFlattenOrderAndModes(t *testing.T) {
	t.Parallel()
	p := SpawnPlan{
		Before: []string{"b1", "b2"}, BeforeParallel: []string{"bp1", "bp2"}, Main: []string{"m"},
		After: []string{"a1"}, AfterParallel: []string{"ap1", "ap2"},
	}
	got := stepsString(Flatten(p))
	want := "1:b1/before/sequential 2:b2/before/sequential 3:bp1/before/parallel 4:bp2/before/parallel " +
		"5:m/main/sequential 6:a1/after/sequential 7:ap1/after/parallel 8:ap2/after/parallel"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if len(Flatten(SpawnPlan{})) != 0 {
		t.Fatal("empty plan has steps")
	}
}

func TestSkipRules(t *testing.T) {
	t.Parallel()
	f, tr := false, true
	full := SpawnRule{Before: []string{"b"}, BeforeParallel: []string{"bp"}, Main: []string{"m"}, After: []string{"a"}, AfterParallel: []string{"ap"}}
	all := "1:b/before/sequential 2:bp/before/parallel 3:m/main/sequential 4:a/after/sequential 5:ap/after/parallel"
	noBefore := "1:m/main/sequential 2:a/after/sequential 3:ap/after/parallel"
	noAfter := "1:b/before/sequential 2:bp/before/parallel 3:m/main/sequential"
	cases := []struct {
		name   string
		intent string
		opts   SpawnOptions
		want   string
	}{
		{"plan_phase no flags", IntentPlanPhase, SpawnOptions{}, all},
		{"rule 2: plan_phase skipResearch", IntentPlanPhase, SpawnOptions{SkipResearch: true}, noBefore},
		{"rule 2: plan_phase hasResearch", IntentPlanPhase, SpawnOptions{HasResearch: true}, noBefore},
		{"rule 3: plan_phase skipVerify", IntentPlanPhase, SpawnOptions{SkipVerify: true}, noAfter},
		{"rules 2+3 together", IntentPlanPhase, SpawnOptions{SkipResearch: true, SkipVerify: true}, "1:m/main/sequential"},
		{"rule 4: execute_phase skipVerify", IntentExecutePhase, SpawnOptions{SkipVerify: true}, noAfter},
		{"execute_phase ignores skipResearch", IntentExecutePhase, SpawnOptions{SkipResearch: true, HasResearch: true}, all},
		{"rule 5: debug_issue planFix false", IntentDebugIssue, SpawnOptions{PlanFix: &f}, noAfter},
		{"debug_issue planFix true", IntentDebugIssue, SpawnOptions{PlanFix: &tr}, all},
		{"debug_issue planFix absent", IntentDebugIssue, SpawnOptions{}, all},
		{"debug_issue ignores skipVerify", IntentDebugIssue, SpawnOptions{SkipVerify: true}, all},
		{"custom intent ignores all flags", "review", SpawnOptions{SkipResearch: true, SkipVerify: true, PlanFix: &f}, all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ResolvePlan(c.intent, full, c.opts)
			if got := stepsString(p.Steps); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestDefaultRulesResolved(t *testing.T) { pgtest.EachStore(t, testDefaultRulesResolved) }

func testDefaultRulesResolved(t *testing.T) {
	fx := newFixture(t)
	want := map[string]string{
		IntentPlanPhase:    "1:sdd-phase-researcher/before/sequential 2:sdd-planner/main/sequential 3:sdd-plan-checker/after/sequential",
		IntentExecutePhase: "1:sdd-executor/main/sequential 2:sdd-verifier/after/sequential",
		IntentDebugIssue:   "1:sdd-debugger/main/sequential 2:sdd-planner/after/sequential",
	}
	for intent, w := range want {
		p, err := fx.e.ResolveAgentSpawnPlan(intent, SpawnOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := stepsString(p.Steps); got != w {
			t.Errorf("%s: %s", intent, got)
		}
		if len(p.AvailableAgents) != 6 {
			t.Errorf("available agents %v", p.AvailableAgents)
		}
	}
	_, err := fx.e.ResolveAgentSpawnPlan("unknown", SpawnOptions{})
	wantErr(t, err, 404, errs.NotFound, "intent")
	// SetSpawnRule creates an unknown intent and records history.
	if _, err := fx.e.SetSpawnRule("review", SpawnRuleInput{Main: []string{"sdd-verifier"}, AfterParallel: []string{"x", "y"}}); err != nil {
		t.Fatal(err)
	}
	p, err := fx.e.ResolveAgentSpawnPlan("review", SpawnOptions{})
	if err != nil || stepsString(p.Steps) != "1:sdd-verifier/main/sequential 2:x/after/parallel 3:y/after/parallel" {
		t.Fatal(p, err)
	}
	h, _ := fx.e.ListSpawnHistory(0)
	if len(h) != 1 || h[0].Kind != HistoryRuleSet || h[0].Intent != "review" {
		t.Fatalf("%+v", h)
	}
	// Built-in rules survive a reload; replaced rules persist.
	if _, err := fx.e.SetSpawnRule(IntentDebugIssue, SpawnRuleInput{Main: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	g := openFixture(t, fx.root, fx.clock)
	rules, _ := g.e.SpawnRules()
	if len(rules) != 4 || rules[IntentDebugIssue].Main[0] != "d" || len(rules[IntentDebugIssue].After) != 0 {
		t.Fatalf("%+v", rules)
	}
}

func TestQueueAndComplete(t *testing.T) { pgtest.EachStore(t, testQueueAndComplete) }

func testQueueAndComplete(t *testing.T) {
	fx := newFixture(t)
	q, err := fx.e.QueueAgentSpawnPlan(IntentPlanPhase, SpawnOptions{SkipVerify: true}, SpawnSource{SourceTool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if q.FlowID != "F-1" || len(q.QueueItems) != 2 || q.QueueItems[0].SpawnID != "S-1" || q.QueueItems[1].Order != 2 ||
		q.QueueItems[0].Status != SpawnPending || q.QueueItems[0].CreatedAt == "" || q.QueueItems[0].SourceTool != "test" {
		t.Fatalf("%+v", q)
	}
	it, err := fx.e.CompleteSpawnQueueItem("S-1", SpawnFailed, "boom")
	if err != nil || it == nil || it.Status != SpawnFailed || it.Note != "boom" || it.CompletedAt == "" {
		t.Fatal(it, err)
	}
	it, err = fx.e.CompleteSpawnQueueItem("S-404", SpawnCompleted, "")
	if err != nil || it != nil {
		t.Fatal("unknown spawn id must give nil, nil:", it, err)
	}
	_, err = fx.e.CompleteSpawnQueueItem("S-1", SpawnCompleted, "")
	wantErr(t, err, 409, errs.Conflict, "spawnId")
	_, err = fx.e.CompleteSpawnQueueItem("S-2", "done", "")
	wantErr(t, err, 400, errs.InvalidInput, "completionStatus")
	pend, _ := fx.e.ListSpawnQueue(SpawnPending)
	all, _ := fx.e.ListSpawnQueue("")
	if len(pend) != 1 || len(all) != 2 {
		t.Fatal(pend, all)
	}
	h, _ := fx.e.ListSpawnHistory(1)
	if len(h) != 1 || h[0].Kind != HistoryCompleted || h[0].FlowID != "F-1" {
		t.Fatalf("%+v", h)
	}
	if got := strings.Join(fx.evs.types(), ","); got != "sdd.spawn.queued,sdd.spawn.completed" {
		t.Fatal(got)
	}
	pr, err := fx.e.PlanTool(Call{Tool: "sdd_plan"}, PlanInput{Phase: "1", AutoSpawn: true, HasResearch: true})
	if err != nil {
		t.Fatal(err)
	}
	if md := pr.Text; !strings.Contains(md, "## Spawn Flow F-2 (plan_phase)") || !strings.Contains(md, "1. S-3: sdd-planner (main, sequential)") ||
		strings.Contains(md, "researcher") || pr.Flow.QueueItems[0].SourceTool != "sdd_plan" {
		t.Fatal(md)
	}
	res, err := fx.e.AgentTool(Call{}, AgentInput{Action: "history", Limit: 200})
	if err != nil || res.(map[string]any)["count"].(int) != 3 {
		t.Fatal(res, err)
	}
}

func TestRetentionPruning(t *testing.T) { pgtest.EachStore(t, testRetentionPruning) }

func testRetentionPruning(t *testing.T) {
	fx := newFixture(t)
	// Leases: 3 active + 105 returned -> 3 active + 100 returned.
	for i := 0; i < 105; i++ {
		l, err := fx.e.CreateLease(fmt.Sprintf("T-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fx.e.ReturnLease(l.LeaseID, ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		_, _ = fx.e.CreateLease("active", nil)
	}
	st, _ := fx.e.GetStats()
	if st.TotalLeases != MaxRetainedLeases+3 || st.ActiveLeases != 3 {
		t.Fatalf("%+v", st)
	}
	var first string
	_ = fx.e.read(func(s *state, _ timeT) error { first = s.Leases[0].LeaseID; return nil })
	if first != "L-6" {
		t.Fatalf("oldest returned leases must go first; first kept %s", first)
	}

	// Queue: fill with a 2-step intent; close most; check the bound.
	if _, err := fx.e.SetSpawnRule("two", SpawnRuleInput{Main: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 230; i++ { // 460 items
		if _, err := fx.e.QueueAgentSpawnPlan("two", SpawnOptions{}, SpawnSource{}); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := fx.e.ListSpawnQueue("")
	if len(all) != 460 {
		t.Fatalf("pending items must never be pruned: %d", len(all))
	}
	for i := 1; i <= 400; i++ {
		if _, err := fx.e.CompleteSpawnQueueItem(fmt.Sprintf("S-%d", i), SpawnCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
	all, _ = fx.e.ListSpawnQueue("")
	pend, _ := fx.e.ListSpawnQueue(SpawnPending)
	if len(pend) != 60 || len(all) != MaxSpawnQueueEntries {
		t.Fatalf("pending %d total %d", len(pend), len(all))
	}
	if all[0].SpawnID != "S-61" {
		t.Fatalf("oldest closed items must go first; first kept %s", all[0].SpawnID)
	}
	h, _ := fx.e.ListSpawnHistory(MaxHistoryLimit)
	if len(h) != MaxHistoryLimit {
		t.Fatal(len(h))
	}
	var hn int
	_ = fx.e.read(func(s *state, _ timeT) error { hn = len(s.Agents.SpawnHistory); return nil })
	if hn != MaxSpawnHistoryEntries {
		t.Fatalf("history %d", hn)
	}
	// The on-disk document agrees with the cache.
	g := openFixture(t, fx.root, fx.clock)
	all2, _ := g.e.ListSpawnQueue("")
	if len(all2) != MaxSpawnQueueEntries {
		t.Fatal(len(all2))
	}
}
