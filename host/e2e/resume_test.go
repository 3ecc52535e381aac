package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// Agents that resume (docs/decisions.md D39): an agent session claims two
// tasks, records decisions on both and holds an sdd lease, then its cairn
// process is killed (SIGKILL, no goodbye). A fresh session under the same
// CAIRN_AGENT_ID calls task_context first and gets both tasks with their
// last decisions and the lease, within its byte budget; the resume prompt
// offers the same brief.
func TestResumeAfterKill(t *testing.T) {
	w := newWorkspace(t)
	env := []string{"CAIRN_AGENT_ID=resumer", "CAIRN_PROJECT=web", "CAIRN_TOOLSETS=core,sdd"}
	first := w.serve(env...)
	var ids []string
	for i, title := range []string{"fix the login redirect", "document the session cookie"} {
		out, err := callOK(first, "task_create", map[string]any{"title": title, "priority": []string{"critical", "normal"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		id := out["task_id"].(string)
		if _, err := callOK(first, "task_update", map[string]any{"task_id": id, "status": "todo"}); err != nil {
			t.Fatal(err)
		}
		if _, err := callOK(first, "task_update", map[string]any{"task_id": id, "claim": true}); err != nil {
			t.Fatal(err)
		}
		for j := 1; j <= 2; j++ {
			if _, err := callOK(first, "thought_record", map[string]any{"task_id": id, "type": "decision", "content": fmt.Sprintf("%s: decision %d", id, j)}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	lease, err := callOK(first, "sdd_lease", map[string]any{"action": "issue", "taskId": ids[0], "scope": []string{"web/login.go"}})
	if err != nil {
		t.Fatal(err)
	}
	leaseID := lease["lease"].(map[string]any)["leaseId"].(string)
	// The lease reaches core over the bus; see that it did before the kill,
	// so what the next session reads survived the kill, not a redelivery.
	eventually(t, patience, "the lease in task_context", func() bool {
		out, err := callOK(first, "task_context", map[string]any{})
		return err == nil && strings.Contains(fmt.Sprint(out["leases"]), leaseID)
	})
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = first.cmd.Process.Wait()

	again := w.serve(env...)
	const budget = 2000
	res := again.call("task_context", map[string]any{"max_bytes": budget})
	out := structured(t, res)
	if res.IsError {
		t.Fatalf("task_context: %v", out)
	}
	validateAgainst(t, w, again.tools()["task_context"], out)
	text := res.Content[0].(mcp.TextContent).Text
	t.Logf("resumed session's first call, %d bytes: %s", len(text), text)
	raw, _ := json.Marshal(out)
	if len(raw) > budget || int(out["bytes"].(float64)) > budget {
		t.Fatalf("brief of %d bytes (says %v) over its budget of %d", len(raw), out["bytes"], budget)
	}
	if out["agent"] != "resumer" {
		t.Fatalf("agent %v", out["agent"])
	}
	got, _ := out["tasks"].([]any)
	if len(got) != 2 {
		t.Fatalf("%d tasks, want 2: %s", len(got), raw)
	}
	for i, v := range got {
		tk := v.(map[string]any)
		if tk["task_id"] != ids[i] || tk["claimed"] != true {
			t.Fatalf("task %d: %v, want %s claimed", i, tk, ids[i])
		}
		ds := tk["decisions"].([]any)
		if len(ds) == 0 || ds[0].(map[string]any)["content"] != ids[i]+": decision 2" {
			t.Fatalf("%s: decisions %v, want the last first", ids[i], ds)
		}
	}
	ls, _ := out["leases"].([]any)
	if len(ls) != 1 || ls[0].(map[string]any)["lease_id"] != leaseID || ls[0].(map[string]any)["task_id"] != ids[0] {
		t.Fatalf("leases %v, want %s on %s", ls, leaseID, ids[0])
	}

	// The same brief as a prompt.
	req := mcp.GetPromptRequest{}
	req.Params.Name = "resume"
	req.Params.Arguments = map[string]string{"agent": "resumer"}
	pr, err := again.c.GetPrompt(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	ptext := pr.Messages[0].Content.(mcp.TextContent).Text
	if !strings.Contains(ptext, ids[0]+": decision 2") || !strings.Contains(ptext, leaseID) {
		t.Fatalf("resume prompt lacks the brief: %s", ptext)
	}
}
