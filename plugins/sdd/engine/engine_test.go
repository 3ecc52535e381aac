package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// fakeClock is an injectable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type recorded struct {
	mu  sync.Mutex
	evs []string
}

// publish records the event's type and reports it handled at once.
func (r *recorded) publish(ev Event, done func(error)) error {
	r.mu.Lock()
	r.evs = append(r.evs, ev.Type)
	r.mu.Unlock()
	done(nil)
	return nil
}
func (r *recorded) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.evs...)
}

type fixture struct {
	e     *Engine
	clock *fakeClock
	root  string
	evs   *recorded
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	return openFixture(t, root, &fakeClock{t: time.Date(2026, 11, 22, 8, 40, 12, 123e6, time.UTC)})
}

func openFixture(t testing.TB, root string, clock *fakeClock) *fixture {
	t.Helper()
	evs := &recorded{}
	e, err := New(Config{Root: root, Clock: clock.Now, Publish: evs.publish, Store: os.Getenv(pgtest.StoreEnv)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if _, err := e.Initialize(); err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, clock: clock, root: root, evs: evs}
}

// wantErr checks err is an *errs.Error with status, code and (when set)
// field.
func wantErr(t *testing.T, err error, status int, code, field string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("want *errs.Error %d %s field %q, got %v", status, code, field, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %d %s (%s)", status, code, e.Status, e.Code, e.Message)
	}
	if field != "" && e.Details["field"] != field {
		t.Fatalf("want field %q, got %v (%s)", field, e.Details["field"], e.Message)
	}
}

func TestISOFormat(t *testing.T) {
	t.Parallel()
	got := iso(time.Date(2026, 11, 22, 8, 40, 12, 123456789, time.FixedZone("x", 3600)))
	if got != "2026-11-22T07:40:12.123Z" {
		t.Fatal(got)
	}
}

func TestKeyPathRules(t *testing.T) { pgtest.EachStore(t, testKeyPathRules) }

func testKeyPathRules(t *testing.T) {
	good := []string{"a", "a.b", "A_b-9.c", "x.y.z"}
	for _, k := range good {
		if _, err := ParseKeyPath(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
	bad := map[string]string{
		"":                             "required",
		".":                            "pattern",
		"a..b":                         "pattern",
		"a.":                           "pattern",
		".a":                           "pattern",
		"a/b":                          "pattern",
		"../x":                         "pattern",
		"/abs":                         "pattern",
		"a b":                          "pattern",
		"a.__proto__":                  "reserved",
		"prototype":                    "reserved",
		"x.constructor.y":              "reserved",
		"é":                            "pattern",
		strings.Repeat("a", 600):       "maxLength",
		strings.Repeat("a.", 40) + "a": "maxSegments",
	}
	f := newFixture(t)
	for k, constraint := range bad {
		for name, call := range map[string]func() error{
			"parse":  func() error { _, err := ParseKeyPath(k); return err },
			"get":    func() error { _, _, err := f.e.GetStateValue(k); return err },
			"set":    func() error { _, err := f.e.SetStateValue(k, 1); return err },
			"delete": func() error { _, err := f.e.DeleteStateValue(k); return err },
		} {
			err := call()
			wantErr(t, err, 400, errs.InvalidInput, "keyPath")
			if e, _ := errs.As(err); e.Details["constraint"] != constraint {
				t.Errorf("%s %q: constraint %v, want %s", name, k, e.Details["constraint"], constraint)
			}
		}
	}
}

func TestStateValues(t *testing.T) { pgtest.EachStore(t, testStateValues) }

func testStateValues(t *testing.T) {
	f := newFixture(t)
	if _, err := f.e.SetStateValue("a.b.c", map[string]any{"n": 1}); err != nil {
		t.Fatal(err)
	}
	v, ok, err := f.e.GetStateValue("a.b.c.n")
	if err != nil || !ok || v.(json.Number).String() != "1" {
		t.Fatalf("%v %v %v", v, ok, err)
	}
	if _, ok, _ := f.e.GetStateValue("a.x"); ok {
		t.Fatal("found missing key")
	}
	if _, err := f.e.SetStateValue("s", "str"); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.SetStateValue("s.x", 1)
	wantErr(t, err, 409, errs.Conflict, "keyPath")
	if ok, _ := f.e.DeleteStateValue("a.b.c.n"); !ok {
		t.Fatal("delete existing returned false")
	}
	if ok, _ := f.e.DeleteStateValue("a.b.c.n"); ok {
		t.Fatal("delete missing returned true")
	}
	_, err = f.e.SetStateValue("big", strings.Repeat("x", MaxValueBytes+1))
	wantErr(t, err, 400, errs.InvalidInput, "value")
	if _, err := f.e.SetStateValue("currentPhase", 4); err != nil {
		t.Fatal(err)
	}
	st, _ := f.e.GetStats()
	if st.CurrentPhase != "4" {
		t.Fatalf("currentPhase %q", st.CurrentPhase)
	}
	// Persisted and reloaded.
	g := openFixture(t, f.root, f.clock)
	if v, ok, _ := g.e.GetStateValue("a.b"); !ok || v == nil {
		t.Fatal("value not persisted")
	}
}

func TestToolActionErrors(t *testing.T) { pgtest.EachStore(t, testToolActionErrors) }

func testToolActionErrors(t *testing.T) {
	f := newFixture(t)
	e := f.e
	cases := []struct {
		name   string
		call   func() error
		status int
		code   string
		field  string
	}{
		{"plan no phase", func() error { _, err := e.PlanTool(Call{}, PlanInput{}); return err }, 400, errs.InvalidInput, "phase"},
		{"plan ../x", func() error { _, err := e.PlanTool(Call{}, PlanInput{Phase: "../x"}); return err }, 400, errs.InvalidInput, "phase"},
		{"plan /abs", func() error { _, err := e.PlanTool(Call{}, PlanInput{Phase: "/abs"}); return err }, 400, errs.InvalidInput, "phase"},
		{"plan a/b", func() error { _, err := e.PlanTool(Call{}, PlanInput{Phase: "a/b"}); return err }, 400, errs.InvalidInput, "phase"},
		{"plan ..", func() error { _, err := e.PlanTool(Call{}, PlanInput{Phase: ".."}); return err }, 400, errs.InvalidInput, "phase"},
		{"plan a..b", func() error { _, err := e.PlanTool(Call{}, PlanInput{Phase: "a..b"}); return err }, 400, errs.InvalidInput, "phase"},
		{"discuss no phase", func() error { _, err := e.DiscussTool(DiscussInput{}); return err }, 400, errs.InvalidInput, "phase"},
		{"discuss bad phase", func() error { _, err := e.DiscussTool(DiscussInput{Phase: "x\\y"}); return err }, 400, errs.InvalidInput, "phase"},
		{"vitals bad command", func() error { _, err := e.VitalsTool(VitalsInput{Command: "../etc/passwd"}); return err }, 400, errs.InvalidInput, "command"},
		{"vitals dot command", func() error { _, err := e.VitalsTool(VitalsInput{Command: ".hidden"}); return err }, 400, errs.InvalidInput, "command"},
		{"state no action", func() error { _, err := e.StateTool(Call{}, StateInput{}); return err }, 400, errs.InvalidInput, "action"},
		{"state bad action", func() error { _, err := e.StateTool(Call{}, StateInput{Action: "nuke"}); return err }, 400, errs.InvalidInput, "action"},
		{"state get no key", func() error { _, err := e.StateTool(Call{}, StateInput{Action: "get"}); return err }, 400, errs.InvalidInput, "keyPath"},
		{"state set no key", func() error { _, err := e.StateTool(Call{}, StateInput{Action: "set", Value: []byte("1")}); return err }, 400, errs.InvalidInput, "keyPath"},
		{"state set no value", func() error { _, err := e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "a"}); return err }, 400, errs.InvalidInput, "value"},
		{"state set bad value", func() error {
			_, err := e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "a", Value: []byte("{")})
			return err
		}, 400, errs.InvalidInput, "value"},
		{"state delete no key", func() error { _, err := e.StateTool(Call{}, StateInput{Action: "delete"}); return err }, 400, errs.InvalidInput, "keyPath"},
		{"state list bad key", func() error {
			_, err := e.StateTool(Call{}, StateInput{Action: "list", KeyPath: "__proto__"})
			return err
		}, 400, errs.InvalidInput, "keyPath"},
		{"validate no content", func() error { _, err := e.ValidateTool(ValidateInput{}); return err }, 400, errs.InvalidInput, "content"},
		{"validate bad type", func() error { _, err := e.ValidateTool(ValidateInput{Content: "x", Type: "novel"}); return err }, 400, errs.InvalidInput, "type"},
		{"lease no action", func() error { _, err := e.LeaseTool(Call{}, LeaseInput{}); return err }, 400, errs.InvalidInput, "action"},
		{"lease issue no task", func() error { _, err := e.LeaseTool(Call{}, LeaseInput{Action: "issue"}); return err }, 400, errs.InvalidInput, "taskId"},
		{"lease issue bad scope", func() error {
			_, err := e.LeaseTool(Call{}, LeaseInput{Action: "issue", TaskID: "T-1", Scope: []string{""}})
			return err
		}, 400, errs.InvalidInput, "scope[0]"},
		{"lease return no id", func() error { _, err := e.LeaseTool(Call{}, LeaseInput{Action: "return"}); return err }, 400, errs.InvalidInput, "leaseId"},
		{"lease return unknown", func() error { _, err := e.LeaseTool(Call{}, LeaseInput{Action: "return", LeaseID: "L-99"}); return err }, 404, errs.NotFound, "leaseId"},
		{"dash bad format", func() error { _, err := e.DashTool(DashInput{Format: "xml"}); return err }, 400, errs.InvalidInput, "format"},
		{"evolve no action", func() error { _, err := e.EvolveTool(EvolveInput{}); return err }, 400, errs.InvalidInput, "action"},
		{"evolve bad scope", func() error { _, err := e.EvolveTool(EvolveInput{Action: "detect", Scope: "x"}); return err }, 400, errs.InvalidInput, "scope"},
		{"evolve apply no id", func() error { _, err := e.EvolveTool(EvolveInput{Action: "apply"}); return err }, 400, errs.InvalidInput, "candidateId"},
		{"evolve apply unknown", func() error { _, err := e.EvolveTool(EvolveInput{Action: "apply", CandidateID: "nope"}); return err }, 404, errs.NotFound, "candidateId"},
		{"evolve rollback no id", func() error { _, err := e.EvolveTool(EvolveInput{Action: "rollback"}); return err }, 400, errs.InvalidInput, "candidateId"},
		{"evolve rollback unknown", func() error { _, err := e.EvolveTool(EvolveInput{Action: "rollback", CandidateID: "nope"}); return err }, 404, errs.NotFound, "candidateId"},
		{"agent no action", func() error { _, err := e.AgentTool(Call{}, AgentInput{}); return err }, 400, errs.InvalidInput, "action"},
		{"agent bad action", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "spawn"}); return err }, 400, errs.InvalidInput, "action"},
		{"agent rules unknown", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "rules", Intent: "zzz"}); return err }, 404, errs.NotFound, "intent"},
		{"agent set_rule no intent", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "set_rule"}); return err }, 400, errs.InvalidInput, "intent"},
		{"agent set_rule no rule", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "set_rule", Intent: "x"}); return err }, 400, errs.InvalidInput, "rule"},
		{"agent set_rule empty", func() error {
			_, err := e.AgentTool(Call{}, AgentInput{Action: "set_rule", Intent: "x", Rule: &SpawnRuleInput{}})
			return err
		}, 400, errs.InvalidInput, "rule"},
		{"agent set_rule bad agent", func() error {
			_, err := e.AgentTool(Call{}, AgentInput{Action: "set_rule", Intent: "x", Rule: &SpawnRuleInput{Main: []string{"../a"}}})
			return err
		}, 400, errs.InvalidInput, "rule.main[0]"},
		{"agent plan no intent", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "plan"}); return err }, 400, errs.InvalidInput, "intent"},
		{"agent plan unknown intent", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "plan", Intent: "nope"}); return err }, 404, errs.NotFound, "intent"},
		{"agent enqueue no intent", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "enqueue"}); return err }, 400, errs.InvalidInput, "intent"},
		{"agent enqueue unknown", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "enqueue", Intent: "nope"}); return err }, 404, errs.NotFound, "intent"},
		{"agent queue bad status", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "queue", Status: "done"}); return err }, 400, errs.InvalidInput, "status"},
		{"agent complete no id", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "complete"}); return err }, 400, errs.InvalidInput, "spawnId"},
		{"agent complete no status", func() error {
			_, err := e.AgentTool(Call{}, AgentInput{Action: "complete", SpawnID: "S-1"})
			return err
		}, 400, errs.InvalidInput, "completionStatus"},
		{"agent complete bad status", func() error {
			_, err := e.AgentTool(Call{}, AgentInput{Action: "complete", SpawnID: "S-1", CompletionStatus: "pending"})
			return err
		}, 400, errs.InvalidInput, "completionStatus"},
		{"agent complete unknown", func() error {
			_, err := e.AgentTool(Call{}, AgentInput{Action: "complete", SpawnID: "S-1", CompletionStatus: "completed"})
			return err
		}, 404, errs.NotFound, "spawnId"},
		{"agent history limit high", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "history", Limit: 201}); return err }, 400, errs.InvalidInput, "limit"},
		{"agent history limit neg", func() error { _, err := e.AgentTool(Call{}, AgentInput{Action: "history", Limit: -1}); return err }, 400, errs.InvalidInput, "limit"},
		{"skill no action", func() error { _, err := e.SkillTool(Call{}, SkillInput{}); return err }, 400, errs.InvalidInput, "action"},
		{"skill bad action", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "get"}); return err }, 400, errs.InvalidInput, "action"},
		{"skill register no id", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "register"}); return err }, 400, errs.InvalidInput, "skillId"},
		{"skill register bad id", func() error {
			_, err := e.SkillTool(Call{}, SkillInput{Action: "register", SkillID: "a/b"})
			return err
		}, 400, errs.InvalidInput, "skillId"},
		{"skill bind no agent", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "bind", SkillID: "s"}); return err }, 400, errs.InvalidInput, "agentId"},
		{"skill bind no skill", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "bind", AgentID: "a"}); return err }, 400, errs.InvalidInput, "skillId"},
		{"skill bind unregistered", func() error {
			_, err := e.SkillTool(Call{}, SkillInput{Action: "bind", AgentID: "a", SkillID: "s"})
			return err
		}, 404, errs.SkillNotFound, "skillId"},
		{"skill unbind no agent", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "unbind", SkillID: "s"}); return err }, 400, errs.InvalidInput, "agentId"},
		{"skill recommend no intent", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "recommend"}); return err }, 400, errs.InvalidInput, "intent"},
		{"skill recommend unknown", func() error {
			_, err := e.SkillTool(Call{}, SkillInput{Action: "recommend", Intent: "nope"})
			return err
		}, 404, errs.NotFound, "intent"},
		{"skill list bad agent", func() error { _, err := e.SkillTool(Call{}, SkillInput{Action: "list", AgentID: "../x"}); return err }, 400, errs.InvalidInput, "agentId"},
		{"binding bad name", func() error { _, err := e.SyncProjectBinding("../p", BindingInput{}); return err }, 400, errs.InvalidInput, "projectName"},
		{"resource bad scheme", func() error { _, err := e.ReadResource("file:///etc/passwd"); return err }, 400, errs.InvalidInput, "uri"},
		{"resource bad category", func() error { _, err := e.ReadResource("sdd://secrets/x"); return err }, 400, errs.InvalidInput, "uri"},
		{"resource dotdot", func() error { _, err := e.ReadResource("sdd://commands/../../etc/passwd"); return err }, 400, errs.InvalidInput, "uri"},
		{"resource dotdot only", func() error { _, err := e.ReadResource("sdd://agents/.."); return err }, 400, errs.InvalidInput, "uri"},
		{"resource escaped", func() error { _, err := e.ReadResource("sdd://commands/%2e%2e"); return err }, 400, errs.InvalidInput, "uri"},
		{"resource empty id", func() error { _, err := e.ReadResource("sdd://commands/"); return err }, 400, errs.InvalidInput, "uri"},
		{"resource unknown", func() error { _, err := e.ReadResource("sdd://commands/nope"); return err }, 404, errs.ResourceNotFound, "uri"},
		{"resource unknown skill", func() error { _, err := e.ReadResource("sdd://skills/nope"); return err }, 404, errs.ResourceNotFound, "uri"},
		{"resource unknown rule", func() error { _, err := e.ReadResource("sdd://spawn-rules/nope"); return err }, 404, errs.ResourceNotFound, "uri"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.call(), c.status, c.code, c.field) })
	}
}

// TestToolMethods drives the structured tool methods: the plan Markdown,
// exact numbers through the state, and the doctrine text.
func TestToolMethods(t *testing.T) { pgtest.EachStore(t, testToolMethods) }

func testToolMethods(t *testing.T) {
	f := newFixture(t)
	plan, err := f.e.PlanTool(Call{Tool: "sdd_plan"}, PlanInput{Phase: "3", Context: "Ship the thing\n- do a\n- do b\nsuccess: it ships"})
	if err != nil {
		t.Fatal(err)
	}
	md := plan.Text
	for _, want := range []string{"# Phase 3 Plan", "<objective>\nShip the thing", "1. [ ] do a", "- it ships", "<success_criteria>"} {
		if !strings.Contains(md, want) {
			t.Errorf("plan lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, ".planning", "PLAN-phase-3.md")); err != nil {
		t.Fatal(err)
	}
	res, _ := ValidateContent(md, "plan")
	if !res.Valid {
		t.Fatalf("generated plan invalid: %v", res.Missing)
	}
	st, err := f.e.StateTool(Call{}, StateInput{Action: "set", KeyPath: "x.y", Value: []byte(`{"n":12345678901234567890}`)})
	if err != nil || !strings.Contains(st.Text, "12345678901234567890") {
		t.Fatalf("%v %v", st, err)
	}
	st, _ = f.e.StateTool(Call{}, StateInput{Action: "get", KeyPath: "x.y.n"})
	if st.Text != "12345678901234567890" || string(st.Value) != "12345678901234567890" {
		t.Fatalf("number not exact: %+v", st)
	}
	v, _ := f.e.ValidateTool(ValidateInput{Content: "## Objective\n"})
	if !strings.Contains(v.Text, "DOCTRINE VIOLATIONS") || !strings.Contains(v.Text, "success_criteria") {
		t.Fatal(v.Text)
	}
}

func TestValidateContent(t *testing.T) { pgtest.EachStore(t, testValidateContent) }

func testValidateContent(t *testing.T) {
	cases := []struct {
		typ, content string
		missing      []string
	}{
		{"plan", "<objective>x</objective><context></context><tasks>t</tasks><verification>v</verification><success_criteria>s</success_criteria>", nil},
		{"", "## Objective\n## Context\n## Tasks\n## Verification\n## Success Criteria\n", nil},
		{"plan", "<OBJECTIVE>x</OBJECTIVE>\n### context\n## TASKS:\n## verification\n<success-criteria>y</success-criteria>", nil},
		{"plan", "# Objective\n## Context\n", []string{"objective", "tasks", "verification", "success_criteria"}},
		{"plan", "<objective>unclosed\n## Context\n```\n## Tasks\n```\n", []string{"objective", "tasks", "verification", "success_criteria"}},
		{"project", "## What This Is\n## core value\n<requirements>r</requirements>", nil},
		{"project", "## What This Is\n## Core Values\n## v1 Requirements", []string{"Core Value", "Requirements"}},
		{"requirements", "## v1 Requirements\n## Out of Scope\n## Traceability", nil},
		{"requirements", "<v1_requirements>a</v1_requirements><out_of_scope></out_of_scope>", []string{"Traceability"}},
	}
	for i, c := range cases {
		res, err := ValidateContent(c.content, c.typ)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.Missing, "|") != strings.Join(c.missing, "|") || res.Valid != (len(c.missing) == 0) {
			t.Errorf("case %d: missing %v, want %v", i, res.Missing, c.missing)
		}
		if (c.typ == "" && res.Type != "plan") || (c.typ != "" && res.Type != c.typ) {
			t.Errorf("case %d: type %q", i, res.Type)
		}
	}
	f := newFixture(t)
	out, err := f.e.ValidateTool(ValidateInput{Content: cases[0].content})
	if err != nil || out.Text != "DOCTRINE VALIDATED" {
		t.Fatal(out, err)
	}
}

func TestLeasesAndExpiry(t *testing.T) { pgtest.EachStore(t, testLeasesAndExpiry) }

func testLeasesAndExpiry(t *testing.T) {
	f := newFixture(t)
	l, err := f.e.CreateLease("T-1", []string{"pkg/a"})
	if err != nil {
		t.Fatal(err)
	}
	if l.LeaseID != "L-1" || l.IssuedAt != "2026-11-22T08:40:12.123Z" || l.ExpiresAt != "2026-11-22T09:40:12.123Z" {
		t.Fatalf("%+v", l)
	}
	l2, _ := f.e.CreateLease("T-2", nil)
	if ok, _ := f.e.ReturnLease(l2.LeaseID, ""); !ok {
		t.Fatal("return failed")
	}
	if ok, _ := f.e.ReturnLease(l2.LeaseID, ""); ok {
		t.Fatal("double return succeeded")
	}
	act, _ := f.e.ListActiveLeases()
	if len(act) != 1 || act[0].LeaseID != "L-1" {
		t.Fatalf("%+v", act)
	}
	// Reload within the lifetime: rehydrated.
	g := openFixture(t, f.root, f.clock)
	if act, _ := g.e.ListActiveLeases(); len(act) != 1 {
		t.Fatalf("active after reload: %+v", act)
	}
	// Past expiry: not rehydrated, not listed, not returnable.
	f.clock.Advance(LeaseDurationMS * time.Millisecond)
	h := openFixture(t, f.root, f.clock)
	if act, _ := h.e.ListActiveLeases(); len(act) != 0 {
		t.Fatalf("expired lease rehydrated: %+v", act)
	}
	if ok, _ := h.e.ReturnLease("L-1", ""); ok {
		t.Fatal("expired lease returned")
	}
	st, _ := h.e.GetStats()
	if st.ActiveLeases != 0 || st.TotalLeases != 2 {
		t.Fatalf("%+v", st)
	}
	if got := f.evs.types(); strings.Join(got, ",") != "sdd.lease.issued,sdd.lease.issued,sdd.lease.returned" {
		t.Fatalf("events %v", got)
	}
}

func TestBindings(t *testing.T) { pgtest.EachStore(t, testBindings) }

func testBindings(t *testing.T) {
	f := newFixture(t)
	r := "R-1"
	b, err := f.e.SyncProjectBinding("web", BindingInput{RoadmapID: &r})
	if err != nil || b.LastSyncedAt == "" || b.RoadmapID != "R-1" {
		t.Fatal(b, err)
	}
	p := "fast"
	b, _ = f.e.SyncProjectBinding("web", BindingInput{Pace: &p})
	if b.RoadmapID != "R-1" || b.Pace != "fast" {
		t.Fatalf("%+v", b)
	}
	_, _ = f.e.SyncProjectBinding("api", BindingInput{})
	s, _ := f.e.GetBindingSummary()
	if s.TotalBindings != 2 || s.WithRoadmap != 1 || s.WithoutRoadmap != 1 || s.Bindings[0].ProjectName != "api" {
		t.Fatalf("%+v", s)
	}
	if ok, _ := f.e.RemoveProjectBinding("api"); !ok {
		t.Fatal("remove")
	}
	if ok, _ := f.e.RemoveProjectBinding("api"); ok {
		t.Fatal("remove twice")
	}
	if b, _ := f.e.GetProjectBinding("api"); b != nil {
		t.Fatal("still there")
	}
}

func TestSkills(t *testing.T) { pgtest.EachStore(t, testSkills) }

func testSkills(t *testing.T) {
	f := newFixture(t)
	title := "Go testing"
	if _, err := f.e.RegisterSkill("go-test", SkillPayload{Title: &title, Tags: []string{"go"}}); err != nil {
		t.Fatal(err)
	}
	_, _ = f.e.RegisterSkill("research", SkillPayload{})
	_, _ = f.e.BindSkillToAgent("sdd-executor", "go-test")
	_, _ = f.e.BindSkillToAgent("sdd-phase-researcher", "research")
	if a, _ := f.e.BindSkillToAgent("sdd-planner", "go-test"); len(a.SkillIDs) != 1 {
		t.Fatalf("bind = %+v", a)
	}
	if a, _ := f.e.BindSkillToAgent("sdd-planner", "go-test"); len(a.SkillIDs) != 1 {
		t.Fatalf("bind not idempotent: %+v", a)
	}
	rec, err := f.e.RecommendSkillsForIntent(IntentPlanPhase, SpawnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rec.Agents, ",") != "sdd-phase-researcher,sdd-planner,sdd-plan-checker" || strings.Join(rec.SkillIDs, ",") != "research,go-test" {
		t.Fatalf("%+v", rec)
	}
	m, _ := f.e.ListSkillMatrix("")
	if len(m.Registry) != 2 || len(m.Agents) != 3 {
		t.Fatalf("%+v", m)
	}
	u, _ := f.e.UnbindSkillFromAgent("sdd-planner", "go-test")
	if len(u.SkillIDs) != 0 {
		t.Fatal(u)
	}
	m, _ = f.e.ListSkillMatrix("nobody")
	if len(m.Agents) != 1 || len(m.Agents[0].SkillIDs) != 0 {
		t.Fatalf("%+v", m)
	}
}

func TestCorruptStateRecovered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := f.e.SetStateValue("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.e.StatePath(), []byte(`{"version":1,"leases":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	g := openFixture(t, f.root, f.clock)
	h := g.e.Health()
	if h.Status != "degraded" || h.Recovery == nil || !strings.Contains(h.Problems[0], "corrupt") {
		t.Fatalf("%+v", h)
	}
	if b, err := os.ReadFile(h.Recovery.MovedTo); err != nil || string(b) != `{"version":1,"leases":[` {
		t.Fatalf("corrupt copy not kept: %v", err)
	}
	st, _ := g.e.GetStats()
	if st.Status != "degraded" {
		t.Fatal(st.Status)
	}
	if !slicesHas(g.evs.types(), EventStateRecovered) {
		t.Fatal("no recovery event")
	}
	if _, ok, _ := g.e.GetStateValue("a"); ok {
		t.Fatal("expected fresh state")
	}
}

func slicesHas(l []string, v string) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func TestVitals(t *testing.T) { pgtest.EachStore(t, testVitals) }

func testVitals(t *testing.T) {
	f := newFixture(t)
	v, err := f.e.GetCommandVitals("plan-phase")
	if err != nil {
		t.Fatal(err)
	}
	if v.Source != "bundled" || v.Synthetic || v.Sections.Objective == "" || v.Sections.SuccessChecks == "" {
		t.Fatalf("%+v", v)
	}
	v, _ = f.e.GetCommandVitals("no-such-command")
	if !v.Synthetic || v.Source != "synthetic" || v.Sections.Objective == "" {
		t.Fatalf("%+v", v)
	}
	dir := filepath.Join(f.root, ".agents", "commands")
	_ = os.MkdirAll(dir, 0o755)
	custom := "# Custom\n\n## Objective\nDo X.\n\n## Process\n1. a\n### sub\nmore\n\n## Success Criteria\n- ok\n"
	_ = os.WriteFile(filepath.Join(dir, "plan-phase.md"), []byte(custom), 0o644)
	v, _ = f.e.GetCommandVitals("plan-phase")
	if v.Source != "workspace" || v.Sections.Objective != "Do X." || !strings.Contains(v.Sections.Process, "more") || v.Sections.SuccessChecks != "- ok" {
		t.Fatalf("%+v", v.Sections)
	}
	vr, err := f.e.VitalsTool(VitalsInput{})
	if err != nil || !strings.Contains(vr.Text, "Health: ok") || !strings.Contains(vr.Text, "Phase: none") || !strings.Contains(vr.Text, "Do X.") {
		t.Fatal(vr, err)
	}
	// A command file symlinked outside the root is refused.
	outside := filepath.Join(t.TempDir(), "secret.md")
	_ = os.WriteFile(outside, []byte("## Objective\nsecret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "evil.md")); err != nil {
		t.Fatal(err)
	}
	_, err = f.e.GetCommandVitals("evil")
	wantErr(t, err, 400, errs.InvalidInput, "")
	_, err = f.e.ReadResource("sdd://commands/evil")
	wantErr(t, err, 400, errs.InvalidInput, "")
}

func TestBundledDefaultsComplete(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{kindCommands, kindAgents} {
		ents, err := bundled.ReadDir("defaults/" + kind)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{kindCommands: 5, kindAgents: 6}[kind]
		if len(ents) != want {
			t.Fatalf("%s: %d files, want %d", kind, len(ents), want)
		}
		for _, en := range ents {
			b, _ := bundled.ReadFile("defaults/" + kind + "/" + en.Name())
			s := parseSections(string(b))
			for name, v := range map[string]string{"objective": s.Objective, "context": s.Context, "process": s.Process,
				"constraints": s.Constraints, "tasks": s.Tasks, "successChecks": s.SuccessChecks} {
				if strings.TrimSpace(v) == "" {
					t.Errorf("%s/%s lacks %s", kind, en.Name(), name)
				}
			}
		}
	}
	// Every agent named by a default rule has a bundled file.
	for intent, r := range defaultSpawnRules() {
		for _, st := range Flatten(SpawnPlan{Before: r.Before, Main: r.Main, After: r.After}) {
			if _, err := bundled.ReadFile("defaults/agents/" + st.Agent + ".md"); err != nil {
				t.Errorf("%s: agent %s has no bundled file", intent, st.Agent)
			}
		}
	}
}

func TestResources(t *testing.T) { pgtest.EachStore(t, testResources) }

func testResources(t *testing.T) {
	f := newFixture(t)
	_, _ = f.e.RegisterSkill("s1", SkillPayload{})
	list, err := f.e.ListResources()
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]bool{}
	for _, r := range list {
		uris[r.URI] = true
		if r.Name == "" || r.MimeType == "" || r.Description == "" {
			t.Errorf("incomplete entry %+v", r)
		}
	}
	for _, u := range []string{"sdd://commands/plan-phase", "sdd://agents/sdd-planner", "sdd://skills/s1", "sdd://spawn-rules/debug_issue"} {
		if !uris[u] {
			t.Errorf("missing %s", u)
		}
		rc, err := f.e.ReadResource(u)
		if err != nil || rc.Content == "" {
			t.Errorf("%s: %v", u, err)
		}
	}
	// Content is capped at ResourceContentLimit characters (runes).
	dir := filepath.Join(f.root, ".agents", "agents")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "big.md"), []byte(strings.Repeat("é", ResourceContentLimit+500)), 0o644)
	rc, err := f.e.ReadResource("sdd://agents/big")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(rc.Content)); n != ResourceContentLimit || !rc.Truncated || rc.ID != "big" || rc.Category != "agents" {
		t.Fatalf("len %d truncated %v", n, rc.Truncated)
	}
}

func TestDashboardAndStats(t *testing.T) { pgtest.EachStore(t, testDashboardAndStats) }

func testDashboardAndStats(t *testing.T) {
	f := newFixture(t)
	_, _ = f.e.CreateLease("T-1", []string{"a|b"})
	_, _ = f.e.QueueAgentSpawnPlan(IntentExecutePhase, SpawnOptions{}, SpawnSource{})
	_, _ = f.e.GeneratePlan("2", "")
	d, err := f.e.GenerateDashboard("json")
	if err != nil {
		t.Fatal(err)
	}
	dj := d.(*Dashboard)
	if dj.Stats.CurrentPhase != "2" || dj.Stats.ActiveLeases != 1 || dj.SpawnCounts[SpawnPending] != 2 || len(dj.Phases) != 1 {
		t.Fatalf("%+v", dj)
	}
	txt, _ := f.e.GenerateDashboard("")
	if s := txt.(string); !strings.Contains(s, "Current phase: 2") || !strings.Contains(s, `a\|b`) {
		t.Fatal(s)
	}
	f.clock.Advance(StaleProjectAfter)
	st, _ := f.e.GetStats()
	if st.Status != "stale" {
		t.Fatal(st.Status)
	}
}

func TestConcurrentUse(t *testing.T) { pgtest.EachStore(t, testConcurrentUse) }

func testConcurrentUse(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if _, err := f.e.SetStateValue("g.k"+strings.Repeat("x", g), i); err != nil {
					t.Error(err)
				}
				if _, err := f.e.CreateLease("T", nil); err != nil {
					t.Error(err)
				}
				if _, err := f.e.QueueAgentSpawnPlan(IntentDebugIssue, SpawnOptions{}, SpawnSource{}); err != nil {
					t.Error(err)
				}
				_, _ = f.e.GenerateDashboard("json")
			}
		}(g)
	}
	wg.Wait()
	st, _ := f.e.GetStats()
	if st.ActiveLeases != 160 || st.TotalSpawnItems != 320 {
		t.Fatalf("%+v", st)
	}
	g := openFixture(t, f.root, f.clock)
	if st2, _ := g.e.GetStats(); st2.ActiveLeases != 160 {
		t.Fatalf("%+v", st2)
	}
}
