package core

import (
	"fmt"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// Every write tool of the core area honours idempotency keys: the same key
// twice applies the write once and answers the first outcome
// (docs/decisions.md D32). Counted on what the store holds, not only on the
// answers.
func TestEveryCoreWriteHonoursItsKey(t *testing.T) {
	p := startCore(t)
	ctx := session("ann", "repo")
	if _, res := invoke(t, p, ctx, "project_register", `{"slug":"repo"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, res := invoke(t, p, ctx, "task_create", `{"title":"base","project":"repo"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	honours := map[string]bool{}
	for _, tl := range sdktest.Tools(p) {
		honours[tl.Name] = tl.HonoursIdempotency
		if !tl.ReadOnly && !tl.HonoursIdempotency && tl.Toolset != sdk.InternalToolset {
			t.Errorf("write tool %s does not honour idempotency keys", tl.Name)
		}
	}
	// count reads what one application of a tool adds.
	count := func(tool string) float64 {
		switch tool {
		case "task_create":
			out, _ := invoke(t, p, ctx, "task_list", `{"project":"repo"}`)
			return out["total_count"].(float64)
		case "thought_record", "task_update":
			out, _ := invoke(t, p, ctx, "audit_verify_chain", `{"task_id":"T-1"}`)
			return out["total_records"].(float64)
		case "audit_session_start":
			out, _ := invoke(t, p, ctx, "audit_session_list", `{}`)
			return out["total_count"].(float64)
		}
		return 0
	}
	for i, tc := range []struct{ tool, args string }{
		{"task_create", `{"title":"once","project":"repo"}`},
		{"task_update", `{"task_id":"T-1","status":"todo"}`},
		{"thought_record", `{"task_id":"T-1","type":"decision","content":"once"}`},
		{"audit_session_start", `{"task_id":"T-1","auditor_id":"ann"}`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			if !honours[tc.tool] {
				t.Fatalf("%s does not declare HonoursIdempotency", tc.tool)
			}
			key := fmt.Sprintf("k-%d", i)
			keyed := sdk.WithIdempotency(ctx, sdk.Idempotency{Key: key, Replay: true})
			before := count(tc.tool)
			first, res := invoke(t, p, keyed, tc.tool, tc.args)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			after := count(tc.tool)
			again, res := invoke(t, p, keyed, tc.tool, tc.args)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if fmt.Sprint(again) != fmt.Sprint(first) {
				t.Errorf("repeat answered %v, want the first outcome %v", again, first)
			}
			if n := count(tc.tool); n != after || after <= before {
				t.Errorf("store counts %v → %v → %v; want one application only", before, after, n)
			}
		})
	}
	// merkle_finalize: a repeat returns the frozen root, not 409.
	out, res := invoke(t, p, ctx, "audit_session_start", `{"task_id":"T-1","auditor_id":"ann"}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	args := fmt.Sprintf(`{"session_id":%q}`, out["session_id"])
	keyed := sdk.WithIdempotency(ctx, sdk.Idempotency{Key: "fin"})
	first, res := invoke(t, p, keyed, "merkle_finalize", args)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	again, res := invoke(t, p, keyed, "merkle_finalize", args)
	if res.Err != nil || fmt.Sprint(again) != fmt.Sprint(first) {
		t.Fatalf("finalize repeat: %v %+v; want the first outcome %v", again, res.Err, first)
	}
	if _, res := invoke(t, p, ctx, "merkle_finalize", args); res.Err == nil || res.Status != 409 {
		t.Fatalf("finalize without the key: %+v; want 409 already finalized", res.Err)
	}
}
