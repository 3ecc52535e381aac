package sdd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// configured returns a plugin configured on a fresh workspace, as the host
// would configure it, and the workspace root.
func configured(t testing.TB) (*sdk.Plugin, string) {
	t.Helper()
	root := t.TempDir()
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: root, DataDir: filepath.Join(root, ".cairn", "data"), Mode: "FULL"}); err != nil {
		t.Fatal(err)
	}
	return p, root
}

func invoke(t testing.TB, p *sdk.Plugin, tool, args string) sdk.Result {
	t.Helper()
	return sdktest.Invoke(context.Background(), p, tool, []byte(args))
}

func mustOK(t *testing.T, p *sdk.Plugin, tool, args string) map[string]any {
	t.Helper()
	r := invoke(t, p, tool, args)
	if r.Err != nil {
		t.Fatalf("%s %s: %v", tool, args, r.Err)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Output, &m); err != nil {
		t.Fatalf("%s output is not an object: %s", tool, r.Output)
	}
	return m
}

func TestToolsDeclared(t *testing.T) {
	t.Parallel()
	p := New()
	var names []string
	readOnly := map[string]bool{}
	for _, ti := range sdktest.Tools(p) {
		if strings.HasPrefix(ti.Name, "sdd_store_") { // the host's own, never listed
			writes := ti.Name == "sdd_store_copy" || ti.Name == "sdd_store_restore"
			if ti.Toolset != sdk.InternalToolset || ti.ReadOnly == writes {
				t.Errorf("%s toolset %q, read-only %v", ti.Name, ti.Toolset, ti.ReadOnly)
			}
			continue
		}
		if strings.HasPrefix(ti.Name, "sdd_gate") { // a person's, never listed
			if ti.Toolset != sdk.InternalToolset || ti.ReadOnly != (ti.Name == "sdd_gate_requests") {
				t.Errorf("%s toolset %q, read-only %v", ti.Name, ti.Toolset, ti.ReadOnly)
			}
			continue
		}
		names = append(names, ti.Name)
		readOnly[ti.Name] = ti.ReadOnly
		if ti.Toolset != "sdd" {
			t.Errorf("%s toolset %q", ti.Name, ti.Toolset)
		}
	}
	if strings.Join(names, ",") != strings.Join(ToolNames, ",") {
		t.Fatalf("tools = %v, want %v", names, ToolNames)
	}
	// Only tools that never write may be listed in READONLY mode.
	for name, want := range map[string]bool{
		"sdd_vitals": true, "sdd_dash": true, "sdd_validate": true, "sdd_discuss": true,
		"sdd_plan": false, "sdd_state": false, "sdd_lease": false, "sdd_evolve": false, "sdd_agent": false, "sdd_skill": false,
	} {
		if readOnly[name] != want {
			t.Errorf("%s readOnly = %v, want %v", name, readOnly[name], want)
		}
	}
}

func TestCallBeforeConfigureIsUnavailable(t *testing.T) {
	t.Parallel()
	p := New()
	r := invoke(t, p, "sdd_dash", `{}`)
	if r.Err == nil || r.Err.Code != errs.Unavailable || r.Status != 503 {
		t.Fatalf("got %+v", r)
	}
}

// TestArgumentErrors covers every rule an action's arguments can break:
// each answer is a typed error naming the field and the constraint.
func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	cases := []struct {
		tool, args        string
		status            int
		field, constraint string
		code              string
	}{
		{"sdd_vitals", `{"command":"../../etc/passwd"}`, 400, "command", "pattern", ""},
		{"sdd_vitals", `{"command":"/etc/passwd"}`, 400, "command", "pattern", ""},
		{"sdd_vitals", `{"command":"a..b"}`, 400, "command", "pattern", ""},
		{"sdd_vitals", `{"cmd":"x"}`, 400, "cmd", "additionalProperties", ""},
		{"sdd_plan", `{}`, 400, "phase", "required", ""},
		{"sdd_plan", `{"phase":""}`, 400, "phase", "minLength", ""},
		{"sdd_plan", `{"phase":"../x"}`, 400, "phase", "pattern", ""},
		{"sdd_plan", `{"phase":"/abs"}`, 400, "phase", "pattern", ""},
		{"sdd_plan", `{"phase":"a%2F..%2Fb"}`, 400, "phase", "pattern", ""},
		{"sdd_plan", `{"phase":"1..2"}`, 400, "phase", "pattern", ""},
		{"sdd_plan", `{"phase":-1}`, 400, "phase", "pattern", ""},
		{"sdd_plan", `{"phase":true}`, 400, "phase", "type", ""},
		{"sdd_plan", `{"phase":"1","auto_spawn":"yes"}`, 400, "auto_spawn", "type", ""},
		{"sdd_discuss", `{}`, 400, "phase", "required", ""},
		{"sdd_discuss", `{"phase":"x\\y"}`, 400, "phase", "pattern", ""},
		{"sdd_state", `{}`, 400, "action", "required", ""},
		{"sdd_state", `{"action":"nuke"}`, 400, "action", "enum", ""},
		{"sdd_state", `{"action":"get"}`, 400, "keyPath", "required", ""},
		{"sdd_state", `{"action":"set","value":1}`, 400, "keyPath", "required", ""},
		{"sdd_state", `{"action":"set","keyPath":"a"}`, 400, "value", "required", ""},
		{"sdd_state", `{"action":"delete"}`, 400, "keyPath", "required", ""},
		{"sdd_state", `{"action":"get","keyPath":"a..b"}`, 400, "keyPath", "pattern", ""},
		{"sdd_state", `{"action":"get","keyPath":"../a"}`, 400, "keyPath", "pattern", ""},
		{"sdd_state", `{"action":"set","keyPath":"a.__proto__.b","value":1}`, 400, "keyPath", "reserved", ""},
		{"sdd_state", `{"action":"set","keyPath":"constructor","value":1}`, 400, "keyPath", "reserved", ""},
		{"sdd_state", `{"action":"list","keyPath":"prototype"}`, 400, "keyPath", "reserved", ""},
		{"sdd_validate", `{}`, 400, "content", "required", ""},
		{"sdd_validate", `{"content":""}`, 400, "content", "minLength", ""},
		{"sdd_validate", `{"content":"   "}`, 400, "content", "required", ""},
		{"sdd_validate", `{"content":"x","type":"novel"}`, 400, "type", "enum", ""},
		{"sdd_lease", `{}`, 400, "action", "required", ""},
		{"sdd_lease", `{"action":"grab"}`, 400, "action", "enum", ""},
		{"sdd_lease", `{"action":"issue"}`, 400, "taskId", "required", ""},
		{"sdd_lease", `{"action":"issue","taskId":"   "}`, 400, "taskId", "required", ""},
		{"sdd_lease", `{"action":"issue","taskId":"T-1","scope":[""]}`, 400, "scope[0]", "minLength", ""},
		{"sdd_lease", `{"action":"return"}`, 400, "leaseId", "required", ""},
		{"sdd_lease", `{"action":"return","leaseId":"x"}`, 400, "leaseId", "pattern", ""},
		{"sdd_lease", `{"action":"return","leaseId":"L-99"}`, 404, "leaseId", "exists", errs.NotFound},
		{"sdd_dash", `{"format":"xml"}`, 400, "format", "enum", ""},
		{"sdd_evolve", `{}`, 400, "action", "required", ""},
		{"sdd_evolve", `{"action":"detect","scope":"x"}`, 400, "scope", "enum", ""},
		{"sdd_evolve", `{"action":"apply"}`, 400, "candidateId", "required", ""},
		{"sdd_evolve", `{"action":"apply","candidateId":"nope"}`, 404, "candidateId", "exists", errs.NotFound},
		{"sdd_evolve", `{"action":"rollback"}`, 400, "candidateId", "required", ""},
		{"sdd_evolve", `{"action":"rollback","candidateId":"nope"}`, 404, "candidateId", "exists", errs.NotFound},
		{"sdd_agent", `{}`, 400, "action", "required", ""},
		{"sdd_agent", `{"action":"spawn"}`, 400, "action", "enum", ""},
		{"sdd_agent", `{"action":"rules","intent":"zzz"}`, 404, "intent", "exists", errs.NotFound},
		{"sdd_agent", `{"action":"set_rule"}`, 400, "intent", "required", ""},
		{"sdd_agent", `{"action":"set_rule","intent":"x"}`, 400, "rule", "required", ""},
		{"sdd_agent", `{"action":"set_rule","intent":"x","rule":{}}`, 400, "rule", "minItems", ""},
		{"sdd_agent", `{"action":"set_rule","intent":"x","rule":{"main":["../a"]}}`, 400, "rule.main[0]", "pattern", ""},
		{"sdd_agent", `{"action":"set_rule","intent":"../x","rule":{"main":["a"]}}`, 400, "intent", "pattern", ""},
		{"sdd_agent", `{"action":"plan"}`, 400, "intent", "required", ""},
		{"sdd_agent", `{"action":"plan","intent":"nope"}`, 404, "intent", "exists", errs.NotFound},
		{"sdd_agent", `{"action":"plan","intent":"plan_phase","options":{"skip":true}}`, 400, "options.skip", "additionalProperties", ""},
		{"sdd_agent", `{"action":"enqueue"}`, 400, "intent", "required", ""},
		{"sdd_agent", `{"action":"enqueue","intent":"nope"}`, 404, "intent", "exists", errs.NotFound},
		{"sdd_agent", `{"action":"queue","status":"done"}`, 400, "status", "enum", ""},
		{"sdd_agent", `{"action":"complete"}`, 400, "spawnId", "required", ""},
		{"sdd_agent", `{"action":"complete","spawnId":"S-1"}`, 400, "completionStatus", "required", ""},
		{"sdd_agent", `{"action":"complete","spawnId":"S-1","completionStatus":"pending"}`, 400, "completionStatus", "enum", ""},
		{"sdd_agent", `{"action":"complete","spawnId":"S-999","completionStatus":"completed"}`, 404, "spawnId", "exists", errs.NotFound},
		// An unknown spawn id of any form is 404, not a 400 from
		// a pattern in the schema.
		{"sdd_agent", `{"action":"complete","spawnId":"sp_nope","completionStatus":"completed"}`, 404, "spawnId", "exists", errs.NotFound},
		{"sdd_agent", `{"action":"complete","spawnId":"S-0","completionStatus":"failed"}`, 404, "spawnId", "exists", errs.NotFound},
		{"sdd_agent", `{"action":"complete","spawnId":"","completionStatus":"failed"}`, 400, "spawnId", "minLength", ""},
		{"sdd_agent", `{"action":"history","limit":201}`, 400, "limit", "maximum", ""},
		{"sdd_agent", `{"action":"history","limit":0}`, 400, "limit", "minimum", ""},
		{"sdd_skill", `{}`, 400, "action", "required", ""},
		{"sdd_skill", `{"action":"get"}`, 400, "action", "enum", ""},
		{"sdd_skill", `{"action":"register"}`, 400, "skillId", "required", ""},
		{"sdd_skill", `{"action":"register","skillId":"a/b"}`, 400, "skillId", "pattern", ""},
		{"sdd_skill", `{"action":"bind","skillId":"s"}`, 400, "agentId", "required", ""},
		{"sdd_skill", `{"action":"bind","agentId":"a"}`, 400, "skillId", "required", ""},
		{"sdd_skill", `{"action":"bind","agentId":"a","skillId":"unregistered"}`, 404, "skillId", "exists", errs.SkillNotFound},
		{"sdd_skill", `{"action":"unbind","skillId":"s"}`, 400, "agentId", "required", ""},
		{"sdd_skill", `{"action":"recommend"}`, 400, "intent", "required", ""},
		{"sdd_skill", `{"action":"recommend","intent":"nope"}`, 404, "intent", "exists", errs.NotFound},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			r := invoke(t, p, c.tool, c.args)
			if r.Err == nil {
				t.Fatalf("want an error, got %s", r.Output)
			}
			code := c.code
			if code == "" {
				code = errs.InvalidInput
			}
			if r.Status != c.status || r.Err.Code != code {
				t.Errorf("status %d code %s, want %d %s (%s)", r.Status, r.Err.Code, c.status, code, r.Err.Message)
			}
			if f := r.Err.Details["field"]; f != c.field {
				t.Errorf("details.field = %v, want %s (%s)", f, c.field, r.Err.Message)
			}
			if k := r.Err.Details["constraint"]; k != c.constraint {
				t.Errorf("details.constraint = %v, want %s (%s)", k, c.constraint, r.Err.Message)
			}
		})
	}
}

func TestOutputShapes(t *testing.T) {
	t.Parallel()
	p, root := configured(t)
	plan := mustOK(t, p, "sdd_plan", `{"phase":2,"context":"Ship it\n- step a","auto_spawn":true,"skip_research":true}`)
	if plan["phase"] != "2" || plan["path"] != ".planning/PLAN-phase-2.md" || !strings.Contains(plan["text"].(string), "## Spawn Flow F-1") {
		t.Fatalf("plan = %v", plan)
	}
	if _, err := os.Stat(filepath.Join(root, ".planning", "PLAN-phase-2.md")); err != nil {
		t.Fatal(err)
	}
	items := plan["flow"].(map[string]any)["queueItems"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["agent"] != "sdd-planner" {
		t.Fatalf("skip_research should leave planner and checker: %v", items)
	}

	st := mustOK(t, p, "sdd_state", `{"action":"set","keyPath":"a.b","value":{"n":1}}`)
	if st["found"] != true || st["value"].(map[string]any)["n"] != float64(1) {
		t.Fatalf("set = %v", st)
	}
	st = mustOK(t, p, "sdd_state", `{"action":"get","keyPath":"a.missing"}`)
	if st["found"] != false || st["value"] != nil || !strings.Contains(st["text"].(string), "No value") {
		t.Fatalf("get missing = %v", st)
	}
	st = mustOK(t, p, "sdd_state", `{"action":"set","keyPath":"z","value":null}`)
	if v, ok := st["value"]; !ok || v != nil {
		t.Fatalf("a stored null must come back as value null: %v", st)
	}

	dash := mustOK(t, p, "sdd_dash", `{"format":"json"}`)
	if dash["format"] != "json" || dash["dashboard"].(map[string]any)["stats"].(map[string]any)["currentPhase"] != "2" {
		t.Fatalf("dash json = %v", dash)
	}
	dash = mustOK(t, p, "sdd_dash", `{}`)
	if dash["format"] != "text" || !strings.Contains(dash["text"].(string), "# SDD Dashboard") {
		t.Fatalf("dash text = %v", dash)
	}
	val := mustOK(t, p, "sdd_validate", `{"content":"<objective>x</objective>","type":"plan"}`)
	if val["valid"] != false || len(val["missing"].([]any)) != 4 || !strings.HasPrefix(val["text"].(string), "DOCTRINE VIOLATIONS") {
		t.Fatalf("validate = %v", val)
	}
	lease := mustOK(t, p, "sdd_lease", `{"action":"list"}`)
	if ls, ok := lease["leases"].([]any); !ok || len(ls) != 0 {
		t.Fatalf("an empty lease list must still be a list: %v", lease)
	}
}

func TestResourcesInProcess(t *testing.T) {
	t.Parallel()
	p, root := configured(t)
	res, tpls, err := sdktest.ListResources(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tpls) != 4 {
		t.Fatalf("templates = %v", tpls)
	}
	uris := map[string]bool{}
	for _, r := range res {
		uris[r.URI] = true
	}
	for _, want := range []string{"sdd://commands/plan-phase", "sdd://agents/sdd-planner", "sdd://spawn-rules/debug_issue"} {
		if !uris[want] {
			t.Errorf("resources lack %s: %v", want, uris)
		}
	}
	big := strings.Repeat("é", ResourceContentLimit+100)
	if err := os.MkdirAll(filepath.Join(root, ".agents", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".agents", "commands", "big.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := sdktest.ReadResource(context.Background(), p, "sdd://commands/big")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(rc[0].Text)); n != ResourceContentLimit {
		t.Fatalf("content has %d characters, want the %d-character cap", n, ResourceContentLimit)
	}
	for _, uri := range []string{
		"sdd://commands/../../etc/passwd", "sdd://commands/..", "sdd://commands//etc/passwd",
		"sdd://commands/%2e%2e", "sdd://commands/..%2Fsecret", "sdd://agents/a%2Fb", "sdd://nope/x",
	} {
		_, err := sdktest.ReadResource(context.Background(), p, uri)
		e, ok := errs.As(err)
		if !ok || e.Code != errs.InvalidInput || e.Details["field"] != "uri" {
			t.Errorf("%s: want a typed 400 naming uri, got %v", uri, err)
		}
	}
	_, err = sdktest.ReadResource(context.Background(), p, "sdd://skills/unknown")
	if e, ok := errs.As(err); !ok || e.Status != 404 || e.Code != errs.ResourceNotFound {
		t.Errorf("unknown skill: %v", err)
	}
}

// TestResourceIDErrors: an invalid sdd:// id (bad kind, bad characters,
// traversal, encoding) is a typed 400 ERR_INVALID_INPUT naming uri, which
// the host answers as invalid params; a well-formed unknown id is 404.
func TestResourceIDErrors(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	cases := []struct {
		uri        string
		status     int
		constraint string
	}{
		{"sdd://secrets/x", 400, "enum"},
		{"sdd://commands", 400, "enum"},
		{"sdd://commands/", 400, "required"},
		{"sdd://commands/a b", 400, "pattern"},
		{"sdd://commands/.hidden", 400, "pattern"},
		{"sdd://commands/a/b", 400, "pattern"},
		{"sdd://agents/../../etc/passwd", 400, "pattern"},
		{"sdd://agents/..", 400, "pattern"},
		{"sdd://agents/%2e%2e", 400, "pattern"},
		{"sdd://skills/" + strings.Repeat("a", 65), 400, "pattern"},
		{"sdd://commands/no-such-command", 404, ""},
		{"sdd://agents/no-such-agent", 404, ""},
		{"sdd://skills/no-such-skill", 404, ""},
		{"sdd://spawn-rules/no_such_intent", 404, ""},
	}
	for _, c := range cases {
		_, err := sdktest.ReadResource(context.Background(), p, c.uri)
		e, ok := errs.As(err)
		if !ok || e.Status != c.status || e.Details["field"] != "uri" {
			t.Errorf("%s: got %v, want %d naming uri", c.uri, err, c.status)
			continue
		}
		if c.status == 400 && (e.Code != errs.InvalidInput || e.Details["constraint"] != c.constraint) {
			t.Errorf("%s: %s %v, want ERR_INVALID_INPUT %s", c.uri, e.Code, e.Details["constraint"], c.constraint)
		}
		if c.status == 404 && e.Code != errs.ResourceNotFound {
			t.Errorf("%s: %s", c.uri, e.Code)
		}
	}
}

// TestIdempotencyThroughTheSDK: the writing tools declare that they honour
// the key, and a call repeated with the same key (as the relay replays it)
// gets the first answer byte for byte and writes once.
func TestIdempotencyThroughTheSDK(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	honours := map[string]bool{ToolPlan: true, ToolState: true, ToolLease: true, ToolAgent: true, ToolSkill: true, "sdd_gate_approve": true}
	for _, ti := range sdktest.Tools(p) {
		if ti.HonoursIdempotency != honours[ti.Name] {
			t.Errorf("%s HonoursIdempotency = %v", ti.Name, ti.HonoursIdempotency)
		}
	}
	ctx := sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:7", Replay: false})
	first := sdktest.Invoke(ctx, p, ToolLease, []byte(`{"action":"issue","taskId":"plan-1"}`))
	replay := sdktest.Invoke(sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:7", Replay: true}), p, ToolLease, []byte(`{"action":"issue","taskId":"plan-1"}`))
	if first.Err != nil || replay.Err != nil || string(first.Output) != string(replay.Output) {
		t.Fatalf("first %s %v\nreplay %s %v", first.Output, first.Err, replay.Output, replay.Err)
	}
	list := mustOK(t, p, ToolLease, `{"action":"list"}`)
	if n := len(list["leases"].([]any)); n != 1 {
		t.Fatalf("%d leases after a replayed issue", n)
	}
	other := sdktest.Invoke(sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:8"}), p, ToolLease, []byte(`{"action":"issue","taskId":"plan-1"}`))
	if other.Err != nil || string(other.Output) == string(first.Output) {
		t.Fatalf("another key must be another call: %s %v", other.Output, other.Err)
	}
	set := `{"action":"set","keyPath":"n","value":[1,{"a":null}]}`
	a := sdktest.Invoke(sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:9"}), p, ToolState, []byte(set))
	b := sdktest.Invoke(sdk.WithIdempotency(context.Background(), sdk.Idempotency{Key: "relay-1:9", Replay: true}), p, ToolState, []byte(set))
	if a.Err != nil || string(a.Output) != string(b.Output) {
		t.Fatalf("%s / %s", a.Output, b.Output)
	}
}

func TestHealthReportsRecoveredState(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(filepath.Join(data, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "state", "sdd-state.json"), []byte(`{"version":`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := New()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: root, DataDir: data}); err != nil {
		t.Fatal(err)
	}
	h := sdktest.Health(context.Background(), p)
	if h.Status != "degraded" || !strings.Contains(h.Message, "corrupt") {
		t.Fatalf("health = %+v", h)
	}
	p2, _ := configured(t)
	if h := sdktest.Health(context.Background(), p2); h.Status != "ok" {
		t.Fatalf("fresh health = %+v", h)
	}
}

// FuzzToolInputs throws arbitrary arguments at every tool: no input may
// panic or fail as an internal error; every failure is a typed 4xx error.
func FuzzToolInputs(f *testing.F) {
	seeds := []struct {
		tool int
		args string
	}{
		{0, `{"command":"plan-phase"}`}, {1, `{"phase":"1","auto_spawn":true}`}, {2, `{"phase":3,"topic":"x"}`},
		{3, `{"action":"set","keyPath":"a.b","value":[1,{"c":null}]}`}, {3, `{"action":"get","keyPath":"__proto__"}`},
		{4, `{"content":"## Objective\n<tasks></tasks>","type":"plan"}`}, {5, `{"action":"issue","taskId":"T-1","scope":["a"]}`},
		{5, `{"action":"return","leaseId":"L-1"}`}, {6, `{"format":"json"}`}, {7, `{"action":"detect"}`},
		{7, `{"action":"apply","candidateId":"missing-plan-1","force":true}`}, {8, `{"action":"enqueue","intent":"debug_issue","options":{"planFix":false}}`},
		{8, `{"action":"complete","spawnId":"S-1","completionStatus":"failed","note":"n"}`}, {9, `{"action":"register","skillId":"go","tags":["x"]}`},
		{9, `{"action":"recommend","intent":"plan_phase"}`}, {1, `{"phase":"..\u002f"}`}, {3, `[]`}, {0, `null`}, {4, `{"content":1}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	p, _ := configured(f)
	f.Fuzz(func(t *testing.T, tool int, args string) {
		name := ToolNames[uint(tool)%uint(len(ToolNames))]
		r := sdktest.Invoke(context.Background(), p, name, []byte(args))
		if r.Err == nil {
			if !json.Valid(r.Output) {
				t.Fatalf("%s %q: output is not JSON: %s", name, args, r.Output)
			}
			return
		}
		if r.Err.Code == errs.Internal || r.Status < 400 || r.Status >= 500 {
			t.Fatalf("%s %q: untyped failure %d %s: %s", name, args, r.Status, r.Err.Code, r.Err.Message)
		}
	})
}
