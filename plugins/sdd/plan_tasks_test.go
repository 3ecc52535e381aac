package sdd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// fakeCore plays the core area behind sdk.CallTool: task_create and
// task_get, a task_create key answered with its first task (as core
// honours keys), and a failure planned for one create.
type fakeCore struct {
	mu      sync.Mutex
	tasks   map[string]map[string]any // id → task_create's arguments
	byKey   map[string]string         // idempotency key → id
	creates int                       // task_create calls that made a task
	calls   []string                  // tool names, in order
	failOn  string                    // a title whose create fails once
}

func newFakeCore() *fakeCore {
	return &fakeCore{tasks: map[string]map[string]any{}, byKey: map[string]string{}}
}

func (f *fakeCore) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	var in map[string]any
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, errs.Invalid("", "json", err.Error())
	}
	switch name {
	case "task_create":
		key := sdk.IdempotencyOf(ctx).Key
		if id, ok := f.byKey[key]; ok && key != "" {
			return json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id)), nil
		}
		if in["title"] == f.failOn {
			f.failOn = ""
			return nil, errs.New(503, errs.Unavailable, "core is restarting")
		}
		f.creates++
		id := fmt.Sprintf("T-%d", len(f.tasks)+1)
		f.tasks[id] = in
		if key != "" {
			f.byKey[key] = id
		}
		return json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id)), nil
	case "task_get":
		id, _ := in["task_id"].(string)
		if _, ok := f.tasks[id]; !ok {
			return nil, errs.NotFoundf(errs.TaskNotFound, "task_id", "no task %s", id)
		}
		return json.RawMessage(fmt.Sprintf(`{"task_id":%q}`, id)), nil
	}
	return nil, errs.NotFoundf(errs.NotFound, "tool", "no tool %s", name)
}

// ctx is a call's context with the fake core behind CallTool, the caller
// in project apollo and the idempotency key (none when empty).
func (f *fakeCore) ctx(key string) context.Context {
	ctx := sdk.WithToolCaller(context.Background(), f.call)
	ctx = sdk.WithCaller(ctx, sdk.Caller{ID: "agent-1", Source: "env", Project: "apollo"})
	if key != "" {
		ctx = sdk.WithIdempotency(ctx, sdk.Idempotency{Key: key, Client: true})
	}
	return ctx
}

const fourItems = "Ship login\n- Write the schema\n- Build the API\n- Write the docs (after 1)\n- Release (after 2, 3)\nsuccess: users log in"

func planTasks(t *testing.T, r sdk.Result) []map[string]any {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("sdd_plan: %v", r.Err)
	}
	var out struct {
		Tasks []map[string]any `json:"tasks"`
		Text  string           `json:"text"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil {
		t.Fatal(err)
	}
	return out.Tasks
}

// TestPlanMakesTasks: sdd_plan with tasks makes each item a task in the
// caller's project, in order, each after the item before or the items its
// "(after …)" names, its description naming the plan file and item.
func TestPlanMakesTasks(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	core := newFakeCore()
	args, _ := json.Marshal(map[string]any{"phase": 1, "context": fourItems, "tasks": true})
	tasks := planTasks(t, sdktest.Invoke(core.ctx("k-1"), p, ToolPlan, args))
	want := []struct {
		id, title string
		deps      []string
	}{
		{"T-1", "Write the schema", nil},
		{"T-2", "Build the API", []string{"T-1"}},
		{"T-3", "Write the docs", []string{"T-1"}},
		{"T-4", "Release", []string{"T-2", "T-3"}},
	}
	if len(tasks) != len(want) {
		t.Fatalf("tasks %v, want %d", tasks, len(want))
	}
	for i, w := range want {
		got := tasks[i]
		if got["item"] != float64(i+1) || got["task_id"] != w.id || fmt.Sprint(got["depends_on"]) != fmt.Sprint(strSlice(w.deps)) {
			t.Errorf("item %d: %v, want %s after %v", i+1, got, w.id, w.deps)
		}
		made := core.tasks[w.id]
		desc, _ := made["description"].(string)
		if made["title"] != w.title || made["project"] != "apollo" || !strings.Contains(desc, fmt.Sprintf(".planning/PLAN-phase-1.md item %d", i+1)) {
			t.Errorf("%s made as %v", w.id, made)
		}
		if deps, _ := made["depends_on"].([]any); fmt.Sprint(deps) != fmt.Sprint(strSlice(w.deps)) {
			t.Errorf("%s depends on %v, want %v", w.id, deps, w.deps)
		}
	}

	// The same call again (a client's retry with its key) makes no task.
	again := planTasks(t, sdktest.Invoke(core.ctx("k-1"), p, ToolPlan, args))
	if core.creates != 4 || fmt.Sprint(again) != fmt.Sprint(tasks) {
		t.Fatalf("a retry made %d tasks in all (want 4) and answered %v", core.creates, again)
	}
}

func strSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestPlanTasksAfterAFailureAreMadeOnce: a call that failed part way
// (core refused the third task) is made whole by the same call again:
// the first two tasks are not made twice.
func TestPlanTasksAfterAFailureAreMadeOnce(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	core := newFakeCore()
	core.failOn = "Write the docs"
	args, _ := json.Marshal(map[string]any{"phase": 1, "context": fourItems, "tasks": true})
	r := sdktest.Invoke(core.ctx("k-9"), p, ToolPlan, args)
	if r.Err == nil || r.Status != 503 || r.Err.Details["tasks_made"] != float64(2) && r.Err.Details["tasks_made"] != 2 {
		t.Fatalf("first call: %+v, want the 503 saying 2 tasks were made", r.Err)
	}
	tasks := planTasks(t, sdktest.Invoke(core.ctx("k-9"), p, ToolPlan, args))
	if len(tasks) != 4 || core.creates != 4 || tasks[3]["task_id"] != "T-4" {
		t.Fatalf("after the retry: %d creates, tasks %v; want 4 tasks made once each", core.creates, tasks)
	}
}

// TestPlanTasksRefusals: a reference to a later item or to none is a 400
// naming context before anything is made; without a task board (no host
// behind CallTool) the call is refused, and nothing is written.
func TestPlanTasksRefusals(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	core := newFakeCore()
	for _, ctx := range []string{"- A\n- B (after 3)", "- A\n- B (after 2)", "- A (after 1)", "- A\n- B (after x)", "- A\n- (after 1)", "- A\n- B (after )"} {
		args, _ := json.Marshal(map[string]any{"phase": 1, "context": ctx, "tasks": true})
		r := sdktest.Invoke(core.ctx(""), p, ToolPlan, args)
		if r.Err == nil || r.Status != 400 || r.Err.Details["field"] != "context" {
			t.Errorf("%q: %+v, want a 400 naming context", ctx, r.Err)
		}
	}
	if len(core.calls) != 0 {
		t.Fatalf("refused plans called core: %v", core.calls)
	}
	args, _ := json.Marshal(map[string]any{"phase": 1, "context": "- A", "tasks": true})
	r := sdktest.Invoke(context.Background(), p, ToolPlan, args)
	if r.Err == nil || r.Status != 409 {
		t.Fatalf("without a host: %+v, want 409", r.Err)
	}
}

// TestLeaseTaskIDs: a taskId that looks like a task id must name an
// existing task (404 naming taskId otherwise); any other taskId must be
// one word (400 naming taskId and the rule), and is not looked up.
func TestLeaseTaskIDs(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	core := newFakeCore()
	core.tasks["T-1"] = map[string]any{"title": "exists"}
	for _, c := range []struct {
		id         string
		status     int
		code, rule string
		looksUp    bool
	}{
		{"T-1", 200, "", "", true},
		{"T-99999", 404, errs.TaskNotFound, "", true},
		{"T-007", 404, errs.TaskNotFound, "", false},
		{"write docs", 400, errs.InvalidInput, "pattern", false},
		{"plan-3", 200, "", "", false},
		{"T-durable", 200, "", "", false},
		{"ENG-42", 200, "", "", false},
	} {
		before := len(core.calls)
		args, _ := json.Marshal(map[string]any{"action": "issue", "taskId": c.id})
		r := sdktest.Invoke(core.ctx(""), p, ToolLease, args)
		switch {
		case c.status == 200 && r.Err != nil:
			t.Errorf("%q: %v", c.id, r.Err)
		case c.status != 200 && (r.Err == nil || r.Status != c.status || r.Err.Code != c.code || r.Err.Details["field"] != "taskId" || (c.rule != "" && r.Err.Details["constraint"] != c.rule)):
			t.Errorf("%q: %+v (%d), want %d %s naming taskId", c.id, r.Err, r.Status, c.status, c.code)
		}
		if looked := len(core.calls) > before; looked != c.looksUp {
			t.Errorf("%q: looked up in core: %v, want %v", c.id, looked, c.looksUp)
		}
	}
}

// TestToolsThatCallTools: sdd_plan and sdd_lease declare that they call
// other areas' tools; no other sdd tool does.
func TestToolsThatCallTools(t *testing.T) {
	t.Parallel()
	for _, ti := range sdktest.Tools(New()) {
		if want := ti.Name == ToolPlan || ti.Name == ToolLease; ti.CallsTools != want {
			t.Errorf("%s CallsTools = %v", ti.Name, ti.CallsTools)
		}
	}
}
