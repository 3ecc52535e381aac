package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The sdd area (Area C) end to end over stdio: every tool and action, the
// sdd:// resources, the sdd.* events, path safety and persistence.

var sddToolNames = []string{"sdd_vitals", "sdd_plan", "sdd_discuss", "sdd_state", "sdd_validate", "sdd_lease", "sdd_dash", "sdd_evolve", "sdd_agent", "sdd_skill"}

// sddClient bundles a session with its workspace and tool list so every
// result can be checked against the tool's declared output schema.
type sddClient struct {
	t     *testing.T
	w     *workspace
	s     *session
	tools map[string]mcp.Tool
}

func newSddClient(t *testing.T, w *workspace, env ...string) *sddClient {
	t.Helper()
	s := w.serve(env...)
	return &sddClient{t: t, w: w, s: s, tools: s.tools()}
}

// ok calls a tool, requires success with _meta.status 200 and a
// structuredContent that validates against the output schema.
func (c *sddClient) ok(tool string, args map[string]any) map[string]any {
	c.t.Helper()
	res := c.s.call(tool, args)
	out := structured(c.t, res)
	if res.IsError {
		c.t.Fatalf("%s %v: %v", tool, args, out)
	}
	if metaStatus(res) != 200 {
		c.t.Errorf("%s status %v, want 200", tool, metaStatus(res))
	}
	validateAgainst(c.t, c.w, c.tools[tool], out)
	return out
}

// fail calls a tool, requires the D3 error envelope (validated against the
// output schema) and returns the error object and status.
func (c *sddClient) fail(tool string, args map[string]any) (map[string]any, float64) {
	c.t.Helper()
	res := c.s.call(tool, args)
	out := structured(c.t, res)
	if !res.IsError {
		c.t.Fatalf("%s %v: want an error, got %v", tool, args, out)
	}
	validateAgainst(c.t, c.w, c.tools[tool], out)
	e, _ := out["error"].(map[string]any)
	if e == nil {
		c.t.Fatalf("%s: no error object in %v", tool, out)
	}
	return e, metaStatus(res)
}

// wantErr checks code, status, details.field and details.constraint.
func (c *sddClient) wantErr(tool string, args map[string]any, status float64, code, field, constraint string) {
	c.t.Helper()
	e, st := c.fail(tool, args)
	d, _ := e["details"].(map[string]any)
	if e["code"] != code || st != status || d["field"] != field || (constraint != "" && d["constraint"] != constraint) {
		c.t.Errorf("%s %v: got %v %v field=%v constraint=%v (%v); want %s %v field=%s constraint=%s",
			tool, args, e["code"], st, d["field"], d["constraint"], e["message"], code, status, field, constraint)
	}
}

func text(m map[string]any) string { s, _ := m["text"].(string); return s }

func TestSddToolsAndActionsEndToEnd(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w, "CAIRN_AGENT_ID=planner-1")
	for _, name := range sddToolNames {
		tool, ok := c.tools[name]
		if !ok {
			t.Fatalf("%s not listed: %v", name, keys(c.tools))
		}
		if tool.Description == "" || tool.InputSchema.Type != "object" {
			t.Errorf("%s lacks a description or an object input schema", name)
		}
		ro := tool.Annotations.ReadOnlyHint != nil && *tool.Annotations.ReadOnlyHint
		wantRO := name == "sdd_vitals" || name == "sdd_dash" || name == "sdd_validate" || name == "sdd_discuss"
		if ro != wantRO {
			t.Errorf("%s readOnlyHint = %v, want %v", name, ro, wantRO)
		}
	}

	// sdd_vitals: bundled, synthetic and workspace command files.
	v := c.ok("sdd_vitals", map[string]any{})
	vit := v["vitals"].(map[string]any)
	if vit["command"] != "plan-phase" || vit["source"] != "bundled" || !strings.Contains(text(v), "Phase: none") || !strings.Contains(text(v), "## Objective") {
		t.Fatalf("vitals = %v", v)
	}
	v = c.ok("sdd_vitals", map[string]any{"command": "no-such-command"})
	if v["vitals"].(map[string]any)["synthetic"] != true || !strings.Contains(text(v), "Synthetic: yes") {
		t.Errorf("synthetic vitals = %v", v)
	}
	w.writeFile(".agents/commands/ship-it.md", "# Ship\n\n<objective>Ship the release.</objective>\n\n## Constraints\nNo Friday deploys.\n", 0o644)
	v = c.ok("sdd_vitals", map[string]any{"command": "ship-it"})
	vit = v["vitals"].(map[string]any)
	secs := vit["sections"].(map[string]any)
	if vit["source"] != "workspace" || vit["path"] != ".agents/commands/ship-it.md" || secs["objective"] != "Ship the release." || secs["constraints"] != "No Friday deploys." {
		t.Errorf("workspace vitals = %v", vit)
	}

	// sdd_discuss writes nothing.
	d := c.ok("sdd_discuss", map[string]any{"phase": 1, "topic": "login flow"})
	if !strings.Contains(text(d), "# Phase 1 Discussion") || !strings.Contains(text(d), "login flow") {
		t.Errorf("discussion = %v", d)
	}
	if _, err := os.Stat(filepath.Join(w.root, ".planning")); err == nil {
		t.Errorf("sdd_discuss created the planning root")
	}

	// sdd_plan writes the plan file; the plan passes sdd_validate.
	p := c.ok("sdd_plan", map[string]any{"phase": "1", "context": "Users can log in\n- add the login form\n- store sessions\nsuccess: a user logs in"})
	if p["phase"] != "1" || p["path"] != ".planning/PLAN-phase-1.md" || p["flow"] != nil {
		t.Fatalf("plan = %v", p)
	}
	onDisk, err := os.ReadFile(filepath.Join(w.root, ".planning", "PLAN-phase-1.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text(p), string(onDisk)) || !strings.Contains(string(onDisk), "1. [ ] add the login form") {
		t.Errorf("plan text and file differ:\n%s", onDisk)
	}
	val := c.ok("sdd_validate", map[string]any{"content": string(onDisk)})
	if text(val) != "DOCTRINE VALIDATED" || val["valid"] != true || val["type"] != "plan" {
		t.Errorf("generated plan does not validate: %v", val)
	}
	p = c.ok("sdd_plan", map[string]any{"phase": 2, "auto_spawn": true})
	flow := p["flow"].(map[string]any)
	var agents []string
	for i, it := range flow["queueItems"].([]any) {
		m := it.(map[string]any)
		if m["order"] != float64(i+1) || m["status"] != "pending" || m["sourceTool"] != "sdd_plan" {
			t.Errorf("queue item %d = %v", i, m)
		}
		agents = append(agents, fmt.Sprintf("%s/%s", m["agent"], m["stage"]))
	}
	if strings.Join(agents, ",") != "sdd-phase-researcher/before,sdd-planner/main,sdd-plan-checker/after" {
		t.Errorf("plan_phase flow = %v", agents)
	}
	if !strings.Contains(text(p), "## Spawn Flow "+flow["flowId"].(string)) {
		t.Errorf("plan text lacks the spawn-flow summary: %s", text(p))
	}
	p = c.ok("sdd_plan", map[string]any{"phase": "2b", "auto_spawn": true, "has_research": true, "skip_verify": true})
	if items := p["flow"].(map[string]any)["queueItems"].([]any); len(items) != 1 || items[0].(map[string]any)["agent"] != "sdd-planner" {
		t.Errorf("has_research + skip_verify should leave only the planner: %v", items)
	}

	// sdd_validate: each type, passing and failing.
	for _, tc := range []struct {
		typ, content string
		missing      []string
	}{
		{"project", "## What This Is\nx\n## Core Value\ny\n## Requirements\nz\n", nil},
		{"project", "## What This Is\nx\n", []string{"Core Value", "Requirements"}},
		{"requirements", "<v1_requirements>a</v1_requirements>\n<out_of_scope>b</out_of_scope>\n<traceability>c</traceability>", nil},
		{"requirements", "## v1 Requirements\n## Traceability\n", []string{"Out of Scope"}},
		{"plan", "<objective>o</objective>\n## Context\n## Tasks\n## Verification\n", []string{"success_criteria"}},
	} {
		out := c.ok("sdd_validate", map[string]any{"content": tc.content, "type": tc.typ})
		var missing []string
		for _, m := range out["missing"].([]any) {
			missing = append(missing, m.(string))
		}
		if strings.Join(missing, "|") != strings.Join(tc.missing, "|") || out["valid"] != (len(tc.missing) == 0) {
			t.Errorf("%s %q: missing %v, want %v", tc.typ, tc.content, missing, tc.missing)
		}
		if len(tc.missing) > 0 && !strings.HasPrefix(text(out), "DOCTRINE VIOLATIONS") {
			t.Errorf("violations text = %q", text(out))
		}
	}

	// sdd_state: set, get, list, delete.
	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "phases.1.decisions", "value": []any{"use sessions", map[string]any{"n": 2}}})
	g := c.ok("sdd_state", map[string]any{"action": "get", "keyPath": "phases.1.decisions"})
	if g["found"] != true || len(g["value"].([]any)) != 2 {
		t.Errorf("get = %v", g)
	}
	l := c.ok("sdd_state", map[string]any{"action": "list"})
	if _, ok := l["value"].(map[string]any)["phases"]; !ok {
		t.Errorf("list = %v", l)
	}
	l = c.ok("sdd_state", map[string]any{"action": "list", "keyPath": "phases.1"})
	if _, ok := l["value"].(map[string]any)["decisions"]; !ok {
		t.Errorf("list subtree = %v", l)
	}
	if del := c.ok("sdd_state", map[string]any{"action": "delete", "keyPath": "phases.1.decisions"}); del["found"] != true {
		t.Errorf("delete = %v", del)
	}
	if g := c.ok("sdd_state", map[string]any{"action": "get", "keyPath": "phases.1.decisions"}); g["found"] != false {
		t.Errorf("get after delete = %v", g)
	}
	if del := c.ok("sdd_state", map[string]any{"action": "delete", "keyPath": "phases.1.decisions"}); del["found"] != false {
		t.Errorf("second delete = %v", del)
	}
	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "blocker", "value": "x"})
	e, st := c.fail("sdd_state", map[string]any{"action": "set", "keyPath": "blocker.child", "value": 1})
	if e["code"] != "ERR_CONFLICT" || st != 409 {
		t.Errorf("set through a non-object: %v %v", e, st)
	}

	// sdd_lease: issue, list, return, return again.
	is := c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "auth-7", "scope": []string{"auth/", "web/login.go"}})
	lease := is["lease"].(map[string]any)
	issued, _ := time.Parse(time.RFC3339Nano, lease["issuedAt"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, lease["expiresAt"].(string))
	if lease["taskId"] != "auth-7" || expires.Sub(issued) != time.Hour || !strings.Contains(text(is), "# Lease issued") {
		t.Fatalf("issue = %v", is)
	}
	id := lease["leaseId"].(string)
	ls := c.ok("sdd_lease", map[string]any{"action": "list"})
	if got := ls["leases"].([]any); len(got) != 1 || got[0].(map[string]any)["leaseId"] != id {
		t.Errorf("list = %v", ls)
	}
	ret := c.ok("sdd_lease", map[string]any{"action": "return", "leaseId": id})
	if ret["lease"].(map[string]any)["result"] != "completed" || ret["lease"].(map[string]any)["returnedAt"] == nil {
		t.Errorf("return = %v", ret)
	}
	c.wantErr("sdd_lease", map[string]any{"action": "return", "leaseId": id}, 404, "ERR_NOT_FOUND", "leaseId", "exists")
	if ls := c.ok("sdd_lease", map[string]any{"action": "list"}); len(ls["leases"].([]any)) != 0 || text(ls) != "No active leases." {
		t.Errorf("list after return = %v", ls)
	}
	id2 := c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "auth-8"})["lease"].(map[string]any)["leaseId"].(string)
	if r := c.ok("sdd_lease", map[string]any{"action": "return", "leaseId": id2, "result": "abandoned: blocked"}); r["lease"].(map[string]any)["result"] != "abandoned: blocked" {
		t.Errorf("return with result = %v", r)
	}

	// sdd_dash in both formats.
	dj := c.ok("sdd_dash", map[string]any{"format": "json"})
	stats := dj["dashboard"].(map[string]any)["stats"].(map[string]any)
	if dj["format"] != "json" || stats["currentPhase"] != "2b" || stats["totalLeases"] != float64(2) || stats["activeLeases"] != float64(0) || stats["status"] != "ok" {
		t.Errorf("dash json = %v", dj)
	}
	if dt := c.ok("sdd_dash", map[string]any{}); dt["format"] != "text" || !strings.Contains(text(dt), "Current phase: 2b") {
		t.Errorf("dash text = %v", dt)
	}

	// sdd_evolve: a phase without a plan file is detected, applied, rolled
	// back, and reported.
	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "currentPhase", "value": 9})
	det := c.ok("sdd_evolve", map[string]any{"action": "detect", "scope": "doctrine"})
	var found bool
	for _, cand := range det["candidates"].([]any) {
		if cand.(map[string]any)["id"] == "missing-plan-9" {
			found = true
		}
	}
	if !found {
		t.Fatalf("detect = %v", det)
	}
	if wf := c.ok("sdd_evolve", map[string]any{"action": "detect", "scope": "workflow"}); len(wf["candidates"].([]any)) != 0 {
		t.Errorf("workflow candidates on a fresh project: %v", wf)
	}
	ap := c.ok("sdd_evolve", map[string]any{"action": "apply", "candidateId": "missing-plan-9"})
	if ap["apply"].(map[string]any)["success"] != true {
		t.Fatalf("apply = %v", ap)
	}
	plan9 := filepath.Join(w.root, ".planning", "PLAN-phase-9.md")
	if _, err := os.Stat(plan9); err != nil {
		t.Fatalf("apply did not write the plan: %v", err)
	}
	rb := c.ok("sdd_evolve", map[string]any{"action": "rollback", "candidateId": "missing-plan-9"})
	if rb["rollback"].(map[string]any)["success"] != true {
		t.Fatalf("rollback = %v", rb)
	}
	if _, err := os.Stat(plan9); !os.IsNotExist(err) {
		t.Errorf("rollback left the plan file: %v", err)
	}
	c.wantErr("sdd_evolve", map[string]any{"action": "rollback", "candidateId": "missing-plan-9"}, 404, "ERR_NOT_FOUND", "candidateId", "exists")
	rep := c.ok("sdd_evolve", map[string]any{"action": "report"})
	if !strings.Contains(text(rep), "# Evolution Report") || !strings.Contains(text(rep), "Actions rolled back: 1") {
		t.Errorf("report = %v", text(rep))
	}

	// sdd_agent: rules, set_rule, plan, enqueue, queue, complete, history.
	rules := c.ok("sdd_agent", map[string]any{"action": "rules"})
	intents := fmt.Sprint(rules["intents"])
	if intents != "[debug_issue execute_phase plan_phase]" {
		t.Errorf("intents = %s", intents)
	}
	one := c.ok("sdd_agent", map[string]any{"action": "rules", "intent": "execute_phase"})
	if fmt.Sprint(one["rule"].(map[string]any)["main"]) != "[sdd-executor]" {
		t.Errorf("execute_phase rule = %v", one)
	}
	c.ok("sdd_agent", map[string]any{"action": "set_rule", "intent": "review_pr", "rule": map[string]any{
		"before": []string{"sdd-phase-researcher"}, "beforeParallel": []string{"lint-a", "lint-b"}, "main": []string{"reviewer"}, "afterParallel": []string{"sdd-verifier"}, "notes": "review",
	}})
	plan := c.ok("sdd_agent", map[string]any{"action": "plan", "intent": "review_pr"})
	var steps []string
	for _, s := range plan["steps"].([]any) {
		m := s.(map[string]any)
		steps = append(steps, fmt.Sprintf("%v:%s:%s:%s", m["order"], m["agent"], m["stage"], m["mode"]))
	}
	if strings.Join(steps, " ") != "1:sdd-phase-researcher:before:sequential 2:lint-a:before:parallel 3:lint-b:before:parallel 4:reviewer:main:sequential 5:sdd-verifier:after:parallel" {
		t.Errorf("flattened = %v", steps)
	}
	dbg := c.ok("sdd_agent", map[string]any{"action": "plan", "intent": "debug_issue", "options": map[string]any{"planFix": false}})
	if len(dbg["after"].([]any)) != 0 || len(dbg["steps"].([]any)) != 1 {
		t.Errorf("debug_issue with planFix false = %v", dbg)
	}
	enq := c.ok("sdd_agent", map[string]any{"action": "enqueue", "intent": "execute_phase", "options": map[string]any{"skipVerify": true}})
	qi := enq["queueItems"].([]any)
	if len(qi) != 1 || qi[0].(map[string]any)["agent"] != "sdd-executor" {
		t.Fatalf("enqueue = %v", enq)
	}
	spawnID := qi[0].(map[string]any)["spawnId"].(string)
	pending := c.ok("sdd_agent", map[string]any{"action": "queue", "status": "pending"})
	if pending["count"] != float64(5) { // 3 + 1 from sdd_plan auto_spawn, 1 enqueued
		t.Errorf("pending = %v", pending["count"])
	}
	done := c.ok("sdd_agent", map[string]any{"action": "complete", "spawnId": spawnID, "completionStatus": "skipped", "note": "already done"})
	if done["status"] != "skipped" || done["note"] != "already done" || done["completedAt"] == nil {
		t.Errorf("complete = %v", done)
	}
	e, st = c.fail("sdd_agent", map[string]any{"action": "complete", "spawnId": spawnID, "completionStatus": "completed"})
	if e["code"] != "ERR_CONFLICT" || st != 409 {
		t.Errorf("completing twice: %v %v", e, st)
	}
	if all := c.ok("sdd_agent", map[string]any{"action": "queue"}); all["count"] != float64(5) {
		t.Errorf("queue = %v", all["count"])
	}
	hist := c.ok("sdd_agent", map[string]any{"action": "history", "limit": 2})
	var kinds []string
	for _, h := range hist["events"].([]any) {
		kinds = append(kinds, h.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "queued,completed" || hist["count"] != float64(2) {
		t.Errorf("history = %v", kinds)
	}
	if all := c.ok("sdd_agent", map[string]any{"action": "history"}); all["count"] != float64(5) { // 2 plan flows, rule_set, queued, completed
		t.Errorf("full history count = %v", all["count"])
	}

	// sdd_skill: register, bind, list, recommend, unbind.
	sk := c.ok("sdd_skill", map[string]any{"action": "register", "skillId": "go-testing", "title": "Go testing", "description": "Table tests", "tags": []string{"go"}})
	if sk["skillId"] != "go-testing" || sk["title"] != "Go testing" {
		t.Errorf("register = %v", sk)
	}
	b := c.ok("sdd_skill", map[string]any{"action": "bind", "agentId": "sdd-planner", "skillId": "go-testing"})
	if fmt.Sprint(b["skillIds"]) != "[go-testing]" {
		t.Errorf("bind = %v", b)
	}
	mat := c.ok("sdd_skill", map[string]any{"action": "list"})
	if len(mat["registry"].([]any)) != 1 || len(mat["agents"].([]any)) != 1 {
		t.Errorf("list = %v", mat)
	}
	if one := c.ok("sdd_skill", map[string]any{"action": "list", "agentId": "sdd-verifier"}); len(one["agents"].([]any)) != 1 {
		t.Errorf("list one agent = %v", one)
	}
	rec := c.ok("sdd_skill", map[string]any{"action": "recommend", "intent": "plan_phase"})
	if fmt.Sprint(rec["agents"]) != "[sdd-phase-researcher sdd-planner sdd-plan-checker]" || fmt.Sprint(rec["skillIds"]) != "[go-testing]" {
		t.Errorf("recommend = %v", rec)
	}
	if rec := c.ok("sdd_skill", map[string]any{"action": "recommend", "intent": "plan_phase", "options": map[string]any{"skipVerify": true, "skipResearch": true}}); fmt.Sprint(rec["agents"]) != "[sdd-planner]" {
		t.Errorf("recommend with options = %v", rec)
	}
	if u := c.ok("sdd_skill", map[string]any{"action": "unbind", "agentId": "sdd-planner", "skillId": "go-testing"}); len(u["skillIds"].([]any)) != 0 {
		t.Errorf("unbind = %v", u)
	}

	// Everything above lives in one JSON document in the data dir (D2).
	raw, err := os.ReadFile(filepath.Join(w.dataDir(), "state", "sdd-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("state file is not JSON: %v", err)
	}
	for _, section := range []string{"project", "bindings", "leases", "agentSystem", "skillRegistry", "agentSkills"} {
		if _, ok := doc[section]; !ok {
			t.Errorf("state file lacks %s", section)
		}
	}
}

// TestSddArgumentErrors: a missing or wrong argument of an action is a
// typed error naming the field and the constraint.
func TestSddArgumentErrors(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	cases := []struct {
		tool              string
		args              map[string]any
		field, constraint string
	}{
		{"sdd_plan", map[string]any{}, "phase", "required"},
		{"sdd_discuss", map[string]any{"topic": "x"}, "phase", "required"},
		{"sdd_state", map[string]any{}, "action", "required"},
		{"sdd_state", map[string]any{"action": "fetch"}, "action", "enum"},
		{"sdd_state", map[string]any{"action": "get"}, "keyPath", "required"},
		{"sdd_state", map[string]any{"action": "set", "keyPath": "a"}, "value", "required"},
		{"sdd_state", map[string]any{"action": "set", "keyPath": "a.__proto__", "value": 1}, "keyPath", "reserved"},
		{"sdd_state", map[string]any{"action": "get", "keyPath": "a..b"}, "keyPath", "pattern"},
		{"sdd_validate", map[string]any{}, "content", "required"},
		{"sdd_validate", map[string]any{"content": "x", "type": "novel"}, "type", "enum"},
		{"sdd_lease", map[string]any{"action": "issue"}, "taskId", "required"},
		{"sdd_lease", map[string]any{"action": "return"}, "leaseId", "required"},
		{"sdd_dash", map[string]any{"format": "xml"}, "format", "enum"},
		{"sdd_evolve", map[string]any{"action": "apply"}, "candidateId", "required"},
		{"sdd_evolve", map[string]any{"action": "detect", "scope": "everything"}, "scope", "enum"},
		{"sdd_agent", map[string]any{"action": "set_rule", "intent": "x"}, "rule", "required"},
		{"sdd_agent", map[string]any{"action": "enqueue"}, "intent", "required"},
		{"sdd_agent", map[string]any{"action": "complete", "spawnId": "S-1"}, "completionStatus", "required"},
		{"sdd_agent", map[string]any{"action": "history", "limit": 500}, "limit", "maximum"},
		{"sdd_skill", map[string]any{"action": "bind", "skillId": "s"}, "agentId", "required"},
		{"sdd_skill", map[string]any{"action": "recommend"}, "intent", "required"},
		{"sdd_skill", map[string]any{"action": "list", "extra": 1}, "extra", "additionalProperties"},
	}
	for _, tc := range cases {
		c.wantErr(tc.tool, tc.args, 400, "ERR_INVALID_INPUT", tc.field, tc.constraint)
	}
	c.wantErr("sdd_skill", map[string]any{"action": "bind", "agentId": "a", "skillId": "never-registered"}, 404, "ERR_SKILL_NOT_FOUND", "skillId", "exists")
	c.wantErr("sdd_agent", map[string]any{"action": "plan", "intent": "unknown_intent"}, 404, "ERR_NOT_FOUND", "intent", "exists")
	c.wantErr("sdd_agent", map[string]any{"action": "complete", "spawnId": "S-404", "completionStatus": "failed"}, 404, "ERR_NOT_FOUND", "spawnId", "exists")
}

// TestSddPathTraversalRefused: no phase, command id, key path or resource
// URI reaches outside the root; each attempt is a typed error.
func TestSddPathTraversalRefused(t *testing.T) {
	w := newWorkspace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("## Objective\nsecret"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newSddClient(t, w)
	rel, _ := filepath.Rel(filepath.Join(w.root, ".agents", "commands"), filepath.Join(outside, "secret"))
	attempts := []string{
		"../x", "../../../../tmp/evil", "..", rel, "/etc/passwd", filepath.Join(outside, "secret"),
		"..%2F..%2Fetc%2Fpasswd", "%2e%2e", "a%2fb", `..\..\x`, "a/b", "x\x00y",
	}
	for _, a := range attempts {
		c.wantErr("sdd_plan", map[string]any{"phase": a}, 400, "ERR_INVALID_INPUT", "phase", "")
		c.wantErr("sdd_discuss", map[string]any{"phase": a}, 400, "ERR_INVALID_INPUT", "phase", "")
		c.wantErr("sdd_vitals", map[string]any{"command": a}, 400, "ERR_INVALID_INPUT", "command", "")
		c.wantErr("sdd_state", map[string]any{"action": "set", "keyPath": a, "value": 1}, 400, "ERR_INVALID_INPUT", "keyPath", "")
		c.wantErr("sdd_skill", map[string]any{"action": "register", "skillId": a}, 400, "ERR_INVALID_INPUT", "skillId", "")
		c.wantErr("sdd_agent", map[string]any{"action": "plan", "intent": a}, 400, "ERR_INVALID_INPUT", "intent", "")
	}
	// A command file symlinked out of the root is not followed.
	if err := os.MkdirAll(filepath.Join(w.root, ".agents", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(w.root, ".agents", "commands", "leak.md")); err != nil {
		t.Fatal(err)
	}
	c.wantErr("sdd_vitals", map[string]any{"command": "leak"}, 400, "ERR_INVALID_INPUT", "command", "path")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// URIs the sdd templates match reach the plugin and are refused with
	// ERR_INVALID_INPUT; the others match no resource at all.
	for uri, want := range map[string]string{
		"sdd://commands/..":                                  "ERR_INVALID_INPUT",
		"sdd://commands/%2e%2e":                              "ERR_INVALID_INPUT",
		"sdd://commands/..%2F..%2Fetc%2Fpasswd":              "ERR_INVALID_INPUT",
		"sdd://agents/a%2Fb":                                 "ERR_INVALID_INPUT",
		"sdd://commands/leak":                                "ERR_INVALID_INPUT",
		"sdd://commands/../../etc/passwd":                    "not found",
		"sdd://commands//etc/passwd":                         "not found",
		"sdd://commands/" + filepath.Join(outside, "secret"): "not found",
	} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		r, err := c.s.c.ReadResource(ctx, req)
		if err == nil {
			t.Errorf("reading %s succeeded: %+v", uri, r.Contents)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reading %s: want %q in the error, got %v", uri, want, err)
		}
	}
	// Nothing was written outside the root or beside the planning root.
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("files appeared outside the root: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(w.root, ".planning")); err == nil {
		t.Errorf("refused plans still created the planning root")
	}
}

// listAll pages through resources/list and resources/templates/list.
func listAll(t *testing.T, s *session) (map[string]mcp.Resource, map[string]mcp.ResourceTemplate) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := map[string]mcp.Resource{}
	var cursor mcp.Cursor
	for {
		req := mcp.ListResourcesRequest{}
		req.Params.Cursor = cursor
		out, err := s.c.ListResources(ctx, req)
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		for _, r := range out.Resources {
			res[r.URI] = r
		}
		if cursor = out.NextCursor; cursor == "" {
			break
		}
	}
	tpls := map[string]mcp.ResourceTemplate{}
	for {
		req := mcp.ListResourceTemplatesRequest{}
		req.Params.Cursor = cursor
		out, err := s.c.ListResourceTemplates(ctx, req)
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		for _, r := range out.ResourceTemplates {
			tpls[r.URITemplate.Raw()] = r
		}
		if cursor = out.NextCursor; cursor == "" {
			break
		}
	}
	return res, tpls
}

func readText(t *testing.T, s *session, uri string) (mcp.TextResourceContents, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	r, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return mcp.TextResourceContents{}, err
	}
	if len(r.Contents) != 1 {
		t.Fatalf("%s: %d contents", uri, len(r.Contents))
	}
	tc, ok := r.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("%s: not text: %#v", uri, r.Contents[0])
	}
	return tc, nil
}

func TestSddResources(t *testing.T) {
	w := newWorkspace(t)
	// A workspace command larger than RESOURCE_CONTENT_LIMIT (5000 chars).
	w.writeFile(".agents/commands/huge.md", "## Objective\n"+strings.Repeat("ü", 6000), 0o644)
	s := w.serve()
	res, tpls := listAll(t, s)
	var sddURIs []string
	for uri, r := range res {
		if strings.HasPrefix(uri, "sdd://") {
			sddURIs = append(sddURIs, uri)
			if r.Name == "" || r.MIMEType == "" || r.Description == "" {
				t.Errorf("%s lacks name, MIME type or description: %+v", uri, r)
			}
		}
	}
	sort.Strings(sddURIs)
	for _, want := range []string{
		"sdd://commands/plan-phase", "sdd://commands/execute-phase", "sdd://commands/debug-issue", "sdd://commands/discuss-phase", "sdd://commands/verify-work", "sdd://commands/huge",
		"sdd://agents/sdd-phase-researcher", "sdd://agents/sdd-planner", "sdd://agents/sdd-plan-checker", "sdd://agents/sdd-executor", "sdd://agents/sdd-verifier", "sdd://agents/sdd-debugger",
		"sdd://spawn-rules/plan_phase", "sdd://spawn-rules/execute_phase", "sdd://spawn-rules/debug_issue",
	} {
		if _, ok := res[want]; !ok {
			t.Errorf("resources/list lacks %s (have %v)", want, sddURIs)
		}
	}
	for _, want := range []string{"sdd://commands/{id}", "sdd://agents/{id}", "sdd://skills/{id}", "sdd://spawn-rules/{id}"} {
		if _, ok := tpls[want]; !ok {
			t.Errorf("templates lack %s (have %v)", want, keys(tpls))
		}
	}

	cmd, err := readText(t, s, "sdd://commands/plan-phase")
	if err != nil || cmd.MIMEType != "text/markdown" || !strings.Contains(strings.ToLower(cmd.Text), "objective") {
		t.Fatalf("plan-phase: %+v %v", cmd, err)
	}
	rule, err := readText(t, s, "sdd://spawn-rules/debug_issue")
	if err != nil {
		t.Fatal(err)
	}
	var rr struct {
		Intent string `json:"intent"`
		Rule   struct {
			Main  []string `json:"main"`
			After []string `json:"after"`
		} `json:"rule"`
	}
	if err := json.Unmarshal([]byte(rule.Text), &rr); err != nil || rr.Intent != "debug_issue" || fmt.Sprint(rr.Rule.Main, rr.Rule.After) != "[sdd-debugger] [sdd-planner]" {
		t.Errorf("spawn rule: %s %v", rule.Text, err)
	}
	huge, err := readText(t, s, "sdd://commands/huge")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(huge.Text)); n != 5000 {
		t.Errorf("huge command read as %d characters, want the 5000 cap", n)
	}

	// A skill registered after start is readable through its template and
	// shows in the next resources/list (the host asks the plugin again).
	c := &sddClient{t: t, w: w, s: s, tools: s.tools()}
	c.ok("sdd_skill", map[string]any{"action": "register", "skillId": "late-skill", "description": "registered after start"})
	lctx, lcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer lcancel()
	relisted, err := s.c.ListResources(lctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, r := range relisted.Resources {
		listed = listed || r.URI == "sdd://skills/late-skill"
	}
	if !listed {
		t.Errorf("sdd://skills/late-skill missing from resources/list after registration")
	}
	sk, err := readText(t, s, "sdd://skills/late-skill")
	if err != nil || !strings.Contains(sk.Text, "registered after start") || sk.MIMEType != "application/json" {
		t.Errorf("late skill: %+v %v", sk, err)
	}
	if _, err := readText(t, s, "sdd://skills/never"); err == nil {
		t.Errorf("reading an unknown skill should fail")
	}
	if _, err := readText(t, s, "sdd://commands/%2e%2e"); err == nil || !strings.Contains(err.Error(), "ERR_INVALID_INPUT") {
		t.Errorf("encoded traversal: want ERR_INVALID_INPUT, got %v", err)
	}
}

// TestSddEvents: leases and spawns publish sdd.* events on the host bus,
// seen by another plugin.
func TestSddEvents(t *testing.T) {
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  watcher:\n    path: %s\n    env: {TESTKIT_NAME: watcher, TESTKIT_SUBSCRIBE: \"sdd.*\"}\n", testkitBin), 0o644)
	c := newSddClient(t, w)
	leaseID := c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "item-1"})["lease"].(map[string]any)["leaseId"].(string)
	c.ok("sdd_lease", map[string]any{"action": "return", "leaseId": leaseID, "result": "done"})
	enq := c.ok("sdd_agent", map[string]any{"action": "enqueue", "intent": "execute_phase", "options": map[string]any{"skipVerify": true}})
	spawnID := enq["queueItems"].([]any)[0].(map[string]any)["spawnId"].(string)
	c.ok("sdd_agent", map[string]any{"action": "complete", "spawnId": spawnID, "completionStatus": "completed"})

	want := "sdd.lease.issued,sdd.lease.returned,sdd.spawn.queued,sdd.spawn.completed"
	var last []string
	eventually(t, patience, "the four sdd events ("+want+")", func() bool {
		evs := structured(t, c.s.call("watcher_events", map[string]any{}))["events"].([]any)
		last = last[:0]
		for _, e := range evs {
			m := e.(map[string]any)
			if m["source"] != "sdd" {
				continue
			}
			last = append(last, m["type"].(string))
			data, _ := m["data"].(map[string]any)
			switch m["type"] {
			case "sdd.lease.issued":
				if data["leaseId"] != leaseID || data["taskId"] != "item-1" {
					t.Errorf("lease.issued data = %v", data)
				}
			case "sdd.lease.returned":
				if data["leaseId"] != leaseID || data["result"] != "done" {
					t.Errorf("lease.returned data = %v", data)
				}
			case "sdd.spawn.queued":
				if data["flowId"] != enq["flowId"] {
					t.Errorf("spawn.queued data = %v", data)
				}
			case "sdd.spawn.completed":
				if data["spawnId"] != spawnID || data["status"] != "completed" {
					t.Errorf("spawn.completed data = %v", data)
				}
			}
		}
		return strings.Join(last, ",") == want
	})
}

// TestSddStateSurvivesRestart: a new host process (initialize) sees the
// persisted state and still-active leases.
func TestSddStateSurvivesRestart(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w)
	id := c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "item-42"})["lease"].(map[string]any)["leaseId"].(string)
	c.ok("sdd_state", map[string]any{"action": "set", "keyPath": "owner.name", "value": "ada"})
	c.ok("sdd_plan", map[string]any{"phase": 4})
	c.s.close()

	c2 := newSddClient(t, w)
	ls := c2.ok("sdd_lease", map[string]any{"action": "list"})["leases"].([]any)
	if len(ls) != 1 || ls[0].(map[string]any)["leaseId"] != id {
		t.Errorf("leases after restart = %v", ls)
	}
	if g := c2.ok("sdd_state", map[string]any{"action": "get", "keyPath": "owner.name"}); g["value"] != "ada" {
		t.Errorf("state after restart = %v", g)
	}
	if v := c2.ok("sdd_vitals", map[string]any{}); v["vitals"].(map[string]any)["command"] != "execute-phase" || !strings.Contains(text(v), "Phase: 4") || !strings.Contains(text(v), "Active leases: 1") {
		t.Errorf("vitals after restart = %v", text(v))
	}
	// The lease ids keep counting up; none is reused.
	if id2 := c2.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "item-43"})["lease"].(map[string]any)["leaseId"]; id2 == id {
		t.Errorf("lease id %v reused", id2)
	}
}

// TestSddReadOnlyMode: READONLY lists exactly the sdd tools that never
// write, and they work.
func TestSddReadOnlyMode(t *testing.T) {
	w := newWorkspace(t)
	c := newSddClient(t, w, "CAIRN_MODE=READONLY")
	var listed []string
	for name := range c.tools {
		if strings.HasPrefix(name, "sdd_") {
			listed = append(listed, name)
		}
	}
	sort.Strings(listed)
	if strings.Join(listed, ",") != "sdd_dash,sdd_discuss,sdd_validate,sdd_vitals" {
		t.Fatalf("READONLY sdd tools = %v", listed)
	}
	c.ok("sdd_vitals", map[string]any{})
	c.ok("sdd_dash", map[string]any{"format": "json"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := c.s.callCtx(ctx, "sdd_state", map[string]any{"action": "set", "keyPath": "a", "value": 1}); err == nil && !res.IsError {
		t.Errorf("READONLY mode allowed sdd_state set")
	}
	if _, err := os.Stat(filepath.Join(w.dataDir(), "state", "sdd-state.json")); err == nil {
		t.Errorf("READONLY calls wrote the state file")
	}
}

// TestSddStandaloneBinary: an operator runs the sdd area from the
// standalone cairn-plugin-sdd binary instead of the built-in one.
func TestSddStandaloneBinary(t *testing.T) {
	bin := filepath.Join(binDir, "cairn-plugin-sdd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/plugins/sdd/cmd/cairn-plugin-sdd").CombinedOutput(); err != nil {
		t.Fatalf("build cairn-plugin-sdd: %v\n%s", err, out)
	}
	if err := writeTrustStore(trustFile, bin); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t)
	w.writeFile(".cairn/config.yaml", fmt.Sprintf("plugins:\n  sdd:\n    path: %s\n", bin), 0o644)
	c := newSddClient(t, w, "CAIRN_TOOLSETS=sdd")
	var names []string
	for n := range c.tools {
		if strings.HasPrefix(n, "sdd_") {
			names = append(names, n)
		}
	}
	if len(names) != 10 {
		t.Fatalf("sdd tools = %v", names)
	}
	c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": "item-1"})
	if d := c.ok("sdd_dash", map[string]any{"format": "json"}); d["dashboard"].(map[string]any)["stats"].(map[string]any)["activeLeases"] != float64(1) {
		t.Errorf("dash through the standalone plugin = %v", d)
	}
	code, out, stderr := runCairn(t, w, "", nil, "plugins", "--json")
	if code != 0 {
		t.Fatalf("cairn plugins: %d %s", code, stderr)
	}
	var rep struct {
		Plugins []struct{ Name, Source string } `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Plugins {
		if p.Name == "sdd" && p.Source != "config" {
			t.Errorf("sdd plugin source %q, want config", p.Source)
		}
	}
}
