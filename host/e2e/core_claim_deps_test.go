package e2e

import (
	"strings"
	"testing"
)

// An agent's first steps through the real binary (docs/decisions.md D10,
// D27, D8): an empty task_next_actions says the work sits in backlog, a
// claim of a task whose dependency is open is refused 409 naming it unless
// forced, and a finished task shows progress 100.
func TestClaimsWaitForDependenciesAndEmptyNextSaysWhy(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web", "CAIRN_AGENT_ID=agent-a")
	dep := taskID(t, s, map[string]any{"title": "Schema"})
	task := taskID(t, s, map[string]any{"title": "API", "depends_on": []any{dep}})

	next := structured(t, s.call("task_next_actions", map[string]any{}))
	why, _ := next["empty_because"].(map[string]any)
	if len(next["next_actions"].([]any)) != 0 || why == nil || why["backlog"] != 2.0 || !strings.Contains(why["hint"].(string), "move them to todo") {
		t.Fatalf("empty next actions = %v", next)
	}

	update(t, s, map[string]any{"task_id": dep, "status": "todo"})
	update(t, s, map[string]any{"task_id": task, "status": "todo"})
	res := s.call("task_update", map[string]any{"task_id": task, "claim": true})
	if !res.IsError || metaStatus(res) != 409 {
		t.Fatalf("claim with an open dependency: %v", structured(t, res))
	}
	e := structured(t, res)["error"].(map[string]any)
	if e["code"] != "ERR_CONFLICT" || !strings.Contains(e["message"].(string), dep+" (todo)") {
		t.Fatalf("refusal = %v", e)
	}
	forced := update(t, s, map[string]any{"task_id": task, "claim": true, "force": true})
	if forced["claimed_by"] != "agent-a" || forced["status"] != "in_progress" {
		t.Fatalf("forced claim = %v", forced)
	}

	// The ready one is offered and claimed; then nothing is left, and the
	// answer says where the tasks are.
	claimed := structured(t, s.call("task_next_actions", map[string]any{"claim": true}))
	if claimed["claimed"] != dep {
		t.Fatalf("claim through next actions = %v", claimed)
	}
	empty := structured(t, s.call("task_next_actions", map[string]any{}))
	why, _ = empty["empty_because"].(map[string]any)
	if why == nil || why["in_progress"] != 2.0 || why["backlog"] != 0.0 {
		t.Fatalf("empty next actions = %v", empty)
	}

	update(t, s, map[string]any{"task_id": dep, "progress": 60})
	update(t, s, map[string]any{"task_id": dep, "status": "review"})
	done := update(t, s, map[string]any{"task_id": dep, "status": "done"})
	got := structured(t, s.call("task_get", map[string]any{"task_id": dep}))
	if done["progress"] != 100.0 || got["progress"] != 100.0 {
		t.Fatalf("done task progress: update %v, get %v", done["progress"], got["progress"])
	}
}
