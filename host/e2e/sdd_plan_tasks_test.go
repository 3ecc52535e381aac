package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// rawCaller calls tools on a raw relay with increasing JSON-RPC ids and,
// when key is set, the client's idempotency key in _meta.
type rawCaller struct {
	t  *testing.T
	r  *rawRelay
	id float64
}

func (c *rawCaller) call(name string, args map[string]any, key string) map[string]any {
	c.t.Helper()
	c.id++
	params := map[string]any{"name": name, "arguments": args}
	if key != "" {
		params["_meta"] = map[string]any{"io.cairn/idempotencyKey": key}
	}
	c.r.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": "tools/call", "params": params})
	m := c.r.next(60*time.Second, fmt.Sprint("the answer to ", name), idIs(c.id))
	res, _ := m["result"].(map[string]any)
	if res == nil {
		c.t.Fatalf("%s: %v", name, m)
	}
	return res
}

// ok is call for a success: its structured content.
func (c *rawCaller) ok(name string, args map[string]any, key string) map[string]any {
	c.t.Helper()
	res := c.call(name, args, key)
	if e := toolError(res); e != nil {
		c.t.Fatalf("%s %v: %v", name, args, e)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	return sc
}

// refused is call for a refusal: its error envelope, with its status and
// code checked.
func (c *rawCaller) refused(name string, args map[string]any, status float64, code string) map[string]any {
	c.t.Helper()
	res := c.call(name, args, "")
	e := toolError(res)
	meta, _ := res["_meta"].(map[string]any)
	if e == nil || e["code"] != code || meta["status"] != status {
		c.t.Fatalf("%s %v: %v (status %v), want %v %s", name, args, res["structuredContent"], meta["status"], status, code)
	}
	return e
}

// taskCount is how many tasks project holds.
func (c *rawCaller) taskCount(project string) float64 {
	c.t.Helper()
	n, _ := c.ok("task_list", map[string]any{"project": project}, "")["total_count"].(float64)
	return n
}

const planWithRefs = "Ship the login page\n- Write the schema\n- Build the API\n- Write the docs (after 1)\n- Release (after 2, 3)\nsuccess: a user logs in"

// An agent's sdd_plan with tasks makes the plan's items tasks in its
// session's project (docs/decisions.md D45): in the plan's order, each
// after the item before or the items its "(after …)" names, each task's
// description naming the plan file and item. The same call again under the
// client's key makes none. A lease names a task that exists (404 for one
// that does not) or a one-word work id (400 for "write docs"). Before,
// sdd_plan made no task (tasks was an unknown argument) and sdd_lease took
// T-99999 and "write docs" as task ids. Through the daemon and with
// --no-daemon.
func TestSddPlanMakesTasks(t *testing.T) {
	for _, mode := range [][]string{sharedEnv, {"CAIRN_DAEMON=off"}} {
		t.Run(mode[0], func(t *testing.T) {
			w := newWorkspace(t)
			r := startRaw(t, w, append([]string{"CAIRN_PROJECT=apollo", "CAIRN_AGENT_ID=planner"}, mode...)...)
			r.initialize()
			planAndLease(t, &rawCaller{t: t, r: r})
		})
	}
}

// planAndLease is TestSddPlanMakesTasks in one session.
func planAndLease(t *testing.T, c *rawCaller) {

	plan := map[string]any{"phase": 1, "context": planWithRefs, "tasks": true}
	out := c.ok("sdd_plan", plan, "plan-apollo-1")
	tasks, _ := out["tasks"].([]any)
	if len(tasks) != 4 {
		t.Fatalf("sdd_plan answered tasks %v, want 4", out["tasks"])
	}
	ids := map[float64]string{}
	for _, raw := range tasks {
		m := raw.(map[string]any)
		ids[m["item"].(float64)] = m["task_id"].(string)
	}
	wantDeps := map[float64][]string{1: {}, 2: {ids[1]}, 3: {ids[1]}, 4: {ids[2], ids[3]}}
	wantTitles := map[float64]string{1: "Write the schema", 2: "Build the API", 3: "Write the docs", 4: "Release"}
	for item, id := range ids {
		task := c.ok("task_get", map[string]any{"task_id": id}, "")
		deps, _ := json.Marshal(task["depends_on"])
		want, _ := json.Marshal(wantDeps[item])
		desc, _ := task["description"].(string)
		if task["title"] != wantTitles[item] || task["project"] != "apollo" || string(deps) != string(want) ||
			!strings.Contains(desc, fmt.Sprintf(".planning/PLAN-phase-1.md item %v", item)) {
			t.Errorf("item %v became %v (depends on %s), want %q in apollo after %s naming the plan", item, task, deps, wantTitles[item], want)
		}
	}
	if n := c.taskCount("apollo"); n != 4 {
		t.Fatalf("%v tasks in apollo after the plan, want 4", n)
	}

	// A retry under the same key answers the same tasks and makes none.
	again := c.ok("sdd_plan", plan, "plan-apollo-1")
	if a, b := fmt.Sprint(again["tasks"]), fmt.Sprint(out["tasks"]); a != b {
		t.Fatalf("the retry answered %s, want %s", a, b)
	}
	if n := c.taskCount("apollo"); n != 4 {
		t.Fatalf("%v tasks in apollo after a retry, want 4", n)
	}

	// Leases: an unknown task id, a taskId that is no id, a real task.
	e := c.refused("sdd_lease", map[string]any{"action": "issue", "taskId": "T-99999"}, 404, "ERR_TASK_NOT_FOUND")
	if d, _ := e["details"].(map[string]any); d["field"] != "taskId" {
		t.Fatalf("unknown task id: %v, want it to name taskId", e)
	}
	e = c.refused("sdd_lease", map[string]any{"action": "issue", "taskId": "write docs"}, 400, "ERR_INVALID_INPUT")
	if d, _ := e["details"].(map[string]any); d["field"] != "taskId" || d["constraint"] != "pattern" {
		t.Fatalf("a taskId with a space: %v, want it to name taskId and its rule", e)
	}
	lease := c.ok("sdd_lease", map[string]any{"action": "issue", "taskId": ids[1]}, "")
	if l, _ := lease["lease"].(map[string]any); l["taskId"] != ids[1] {
		t.Fatalf("lease on %s: %v", ids[1], lease)
	}
	if list := c.ok("sdd_lease", map[string]any{"action": "list"}, ""); len(list["leases"].([]any)) != 1 {
		t.Fatalf("leases after the refusals: %v, want only the one issued", list["leases"])
	}
}

// The plan's tasks are written with the caller's rights: a READONLY
// session cannot run sdd_plan at all, and a session whose toolsets leave
// out core has its inner task_create refused (the host checks the inner
// call as the caller's own), so no task is made either way.
func TestSddPlanTasksKeepTheCallersRights(t *testing.T) {
	w := newWorkspace(t)
	plan := map[string]any{"phase": 1, "context": "- Write the schema\n- Build the API", "tasks": true}

	ro := startRaw(t, w, "CAIRN_PROJECT=apollo", "CAIRN_MODE=READONLY")
	ro.initialize()
	(&rawCaller{t: t, r: ro}).refused("sdd_plan", plan, 403, "ERR_FORBIDDEN")
	_ = ro.in.Close()
	_ = ro.cmd.Wait()

	sddOnly := startRaw(t, w, "CAIRN_PROJECT=apollo", "CAIRN_TOOLSETS=sdd")
	sddOnly.initialize()
	e := (&rawCaller{t: t, r: sddOnly}).refused("sdd_plan", plan, 403, "ERR_FORBIDDEN")
	if d, _ := e["details"].(map[string]any); d["required"] != "toolset core" {
		t.Fatalf("sdd_plan with tasks without core's toolset: %v, want the inner task_create's refusal", e)
	}
	_ = sddOnly.in.Close()
	_ = sddOnly.cmd.Wait()

	full := startRaw(t, w, "CAIRN_PROJECT=apollo")
	full.initialize()
	if n := (&rawCaller{t: t, r: full}).taskCount("apollo"); n != 0 {
		t.Fatalf("%v tasks in apollo after refused plans, want 0", n)
	}
}
