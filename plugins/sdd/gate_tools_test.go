package sdd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// invokeAs calls tool as the caller id.
func invokeAs(p *sdk.Plugin, id, tool, args string) sdk.Result {
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: id, Source: "test"})
	return sdktest.Invoke(ctx, p, tool, []byte(args))
}

// The phase gate through the plugin's tools (docs/decisions.md D45): a
// person turns it on, the agent's move is refused 428 naming the internal
// approve tool, the request is listed, the agent cannot approve its own
// move and another person's approval moves the phase.
func TestPhaseGateTools(t *testing.T) {
	t.Parallel()
	p, _ := configured(t)
	ok := func(r sdk.Result) map[string]any {
		t.Helper()
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		var m map[string]any
		_ = json.Unmarshal(r.Output, &m)
		return m
	}
	ok(invokeAs(p, "agent-1", "sdd_state", `{"action":"set","keyPath":"currentPhase","value":"1"}`))
	if m := ok(invokeAs(p, "alice", "sdd_gates", `{"mode":"on"}`)); m["mode"] != "on" || m["changed_by"] != "alice" {
		t.Fatalf("sdd_gates on: %v", m)
	}
	r := invokeAs(p, "agent-1", "sdd_state", `{"action":"set","keyPath":"currentPhase","value":"2"}`)
	if r.Err == nil || r.Err.Status != 428 || r.Err.Code != errs.ApprovalRequired {
		t.Fatalf("the agent's move: %+v; want 428", r.Err)
	}
	if a, _ := r.Err.Details["approve"].(map[string]any); a["tool"] != "sdd_gate_approve" || r.Err.Details["question"] != "Approve moving the sdd phase from “1” to “2”, asked by agent-1?" {
		t.Fatalf("details %v", r.Err.Details)
	}
	pending, _ := ok(invokeAs(p, "alice", "sdd_gate_requests", `{}`))["pending"].([]any)
	if len(pending) != 1 || pending[0].(map[string]any)["requested_by"] != "agent-1" {
		t.Fatalf("pending %v", pending)
	}
	r = invokeAs(p, "agent-1", "sdd_gate_approve", `{"phase":"2","decision":"approve"}`)
	if r.Err == nil || r.Err.Status != 403 || r.Err.Details["required"] != "another person" {
		t.Fatalf("the agent approving itself: %+v; want 403", r.Err)
	}
	if m := ok(invokeAs(p, "alice", "sdd_gate_approve", `{"phase":"2","decision":"approve","via":"dashboard"}`)); m["current_phase"] != "2" || m["by"] != "alice" || m["moved"] != true {
		t.Fatalf("alice's approval: %v", m)
	}
	m := ok(invokeAs(p, "agent-1", "sdd_dash", `{}`))
	if text, _ := m["text"].(string); !strings.Contains(text, "Current phase: 2") || !strings.Contains(text, "Decided: approve 1 → 2 by alice via dashboard") {
		t.Fatalf("sdd_dash after the approval:\n%s", text)
	}
}
