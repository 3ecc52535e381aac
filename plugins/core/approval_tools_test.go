package core

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// The approval tools end to end in the plugin (docs/decisions.md D45):
// internal, the agent's move to done refused 428 with the contract's
// details, a person's decision a "decision" record on the task's trail,
// and the agent seeing it in task_get and task_context.
func TestApprovalToolsThroughThePlugin(t *testing.T) {
	p := startCore(t)
	op := session("operator:ann", "")
	agent := session("agent-1", "p")
	for _, tl := range sdktest.Tools(p) {
		switch tl.Name {
		case "project_approval", "task_approve", "task_approvals":
			if tl.Toolset != sdk.InternalToolset {
				t.Errorf("%s is in toolset %q; a person's tool must be internal", tl.Name, tl.Toolset)
			}
		}
	}
	if _, res := invoke(t, p, op, "project_register", `{"slug":"p"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	out, res := invoke(t, p, op, "project_approval", `{"project":"p","mode":"on"}`)
	if res.Err != nil || out["mode"] != "on" || out["changed_by"] != "operator:ann" {
		t.Fatalf("project_approval: %v %+v", out, res.Err)
	}
	for _, args := range []string{
		`{"title":"ship it","project":"p"}`,
	} {
		if _, res := invoke(t, p, agent, "task_create", args); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	for _, args := range []string{`{"task_id":"T-1","status":"todo"}`, `{"task_id":"T-1","claim":true}`, `{"task_id":"T-1","status":"review"}`} {
		if _, res := invoke(t, p, agent, "task_update", args); res.Err != nil {
			t.Fatalf("%s: %+v", args, res.Err)
		}
	}
	// Under an idempotency key, as a client's retry would be.
	keyed := sdk.WithIdempotency(agent, sdk.Idempotency{Key: "k-done"})
	done := `{"task_id":"T-1","status":"done"}`
	_, res = invoke(t, p, keyed, "task_update", done)
	if res.Err == nil || res.Status != 428 || res.Err.Code != errs.ApprovalRequired {
		t.Fatalf("move to done: %+v (status %d), want 428 %s", res.Err, res.Status, errs.ApprovalRequired)
	}
	if approve, _ := res.Err.Details["approve"].(map[string]any); approve["tool"] != "task_approve" || !strings.Contains(res.Err.Message, "cairn task approve T-1") {
		t.Fatalf("the refusal names no way to approve: %+v", res.Err)
	}
	list, res := invoke(t, p, op, "task_approvals", `{}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if pending, _ := list["pending"].([]any); len(pending) != 1 || pending[0].(map[string]any)["requested_by"] != "agent-1" {
		t.Fatalf("task_approvals: %v", list)
	}
	// The agent cannot approve its own request; a person can.
	if _, res := invoke(t, p, agent, "task_approve", `{"task_id":"T-1","decision":"approve"}`); res.Err == nil || res.Status != 403 {
		t.Fatalf("self approval: %+v, want 403", res.Err)
	}
	dec, res := invoke(t, p, op, "task_approve", `{"task_id":"T-1","decision":"approve","complete_move":false}`)
	if res.Err != nil || dec["state"] != "approved" || dec["status"] != "review" {
		t.Fatalf("task_approve: %v %+v", dec, res.Err)
	}
	thought, _ := dec["thought_id"].(string)
	if thought == "" {
		t.Fatalf("the decision has no record on the trail: %v", dec)
	}
	// The same keyed call runs again now, and succeeds.
	upd, res := invoke(t, p, keyed, "task_update", done)
	if res.Err != nil || upd["status"] != "done" {
		t.Fatalf("the retried move: %v %+v", upd, res.Err)
	}
	got, res := invoke(t, p, agent, "task_get", `{"task_id":"T-1"}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if a, _ := got["approval"].(map[string]any); a["state"] != "approved" || a["by"] != "operator:ann" || a["via"] != "cli" || a["mode"] != "on" {
		t.Fatalf("task_get's approval: %v", got["approval"])
	}
	trail, res := invoke(t, p, agent, "thought_record_list", `{"task_id":"T-1"}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	raw, _ := json.Marshal(trail)
	var records struct {
		Thoughts []struct {
			ThoughtID  string         `json:"thought_id"`
			Type       string         `json:"type"`
			Content    string         `json:"content"`
			RecordedBy string         `json:"recorded_by"`
			Metadata   map[string]any `json:"metadata"`
		} `json:"thoughts"`
	}
	if err := json.Unmarshal(raw, &records); err != nil || len(records.Thoughts) != 1 {
		t.Fatalf("thought_record_list: %s (%v)", raw, err)
	}
	r := records.Thoughts[0]
	if r.ThoughtID != thought || r.Type != "decision" || r.RecordedBy != "operator:ann" || r.Content != "Approved by operator:ann via cli (in review; its move to done may proceed)" {
		t.Fatalf("the decision's record: %+v", r)
	}
	if a, _ := r.Metadata["approval"].(map[string]any); a["decision"] != "approve" || a["from"] != "review" || a["to"] != "review" {
		t.Fatalf("the record's metadata: %v", r.Metadata)
	}
	if v, res := invoke(t, p, agent, "audit_verify_chain", `{"task_id":"T-1"}`); res.Err != nil || v["chain_valid"] != true || v["total_records"] != 6.0 {
		t.Fatalf("the chain with a decision: %v %+v", v, res.Err)
	}

	// A rejection: the agent reads it in task_context.
	if _, res := invoke(t, p, agent, "task_create", `{"title":"second","project":"p"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, args := range []string{`{"task_id":"T-2","status":"todo"}`, `{"task_id":"T-2","claim":true}`, `{"task_id":"T-2","status":"review"}`} {
		if _, res := invoke(t, p, agent, "task_update", args); res.Err != nil {
			t.Fatalf("%s: %+v", args, res.Err)
		}
	}
	if _, res := invoke(t, p, op, "task_approve", `{"task_id":"T-2","decision":"reject","reason":"add the migration test","via":"dashboard"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	brief, res := invoke(t, p, agent, "task_context", `{}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var b struct {
		Tasks []struct {
			TaskID   string         `json:"task_id"`
			Status   string         `json:"status"`
			Approval map[string]any `json:"approval"`
		} `json:"tasks"`
	}
	raw, _ = json.Marshal(brief)
	if err := json.Unmarshal(raw, &b); err != nil || len(b.Tasks) != 1 {
		t.Fatalf("task_context: %s (%v)", raw, err)
	}
	if tk := b.Tasks[0]; tk.TaskID != "T-2" || tk.Status != "in_progress" || tk.Approval["state"] != "rejected" || tk.Approval["reason"] != "add the migration test" {
		t.Fatalf("task_context's task: %+v", tk)
	}
}
