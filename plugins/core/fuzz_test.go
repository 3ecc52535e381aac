package core

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// FuzzCoreTools drives every core tool through the SDK exactly as a host
// call would (schema validation, decoding, handler, encoding) with arbitrary
// arguments: no panic, no internal error, and every refusal a typed client
// error.
func FuzzCoreTools(f *testing.F) {
	f.Setenv("CAIRN_LOG_LEVEL", "error")
	f.Setenv("CAIRN_PROJECT", "fuzz")
	p := New()
	dir := f.TempDir()
	if err := sdktest.Configure(context.Background(), p, sdk.Config{Root: dir, DataDir: dir}); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = sdktest.Stop(context.Background(), p) })
	tools := sdktest.Tools(p)
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "fuzzer"})
	seed := func(name, args string) {
		for i, t := range tools {
			if t.Name == name {
				f.Add(uint8(i), []byte(args))
			}
		}
	}
	seed("task_create", `{"title":"parent","project":"fuzz"}`)
	seed("task_create", `{"title":"child","project":"fuzz","parent_id":"T-1","labels":["a"]}`)
	seed("task_update", `{"task_id":"T-1","status":"todo","progress":100}`)
	seed("task_update", `{"task_id":"T-1","status":"blocked"}`)
	seed("task_create", `{"title":"later","project":"fuzz","depends_on":["T-1","T-2"]}`)
	seed("task_update", `{"task_id":"T-1","depends_on":["T-3"]}`)
	seed("task_update", `{"task_id":"T-2","claim":true}`)
	seed("task_update", `{"task_id":"T-2","release":true}`)
	seed("task_next_actions", `{"claim":true,"include_blocked":true}`)
	seed("task_list", `{"project":"fuzz","search":"par ent","sort_by":"priority","limit":500}`)
	seed("task_next_actions", `{"include_blocked":true}`)
	seed("task_get", `{"task_id":"T-1","include_thought_trail":true,"include_dependents":true}`)
	seed("thought_record", `{"task_id":"T-1","type":"decision","content":"x","metadata":{"a":[1,"\u2028"]}}`)
	seed("thought_record_list", `{"task_id":"T-1","verify_chain":true,"limit":1}`)
	seed("audit_session_start", `{"task_id":"T-1","auditor_id":"a","scope":"deep"}`)
	seed("audit_verify_chain", `{"session_id":"A-1","full_trace":true}`)
	seed("merkle_root", `{"session_id":"A-1"}`)
	seed("merkle_finalize", `{"session_id":"A-1","task_id":"T-2"}`)
	seed("skill_list", `{"search":"x","capability":"y"}`)
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tool := tools[int(which)%len(tools)]
		res := sdktest.Invoke(ctx, p, tool.Name, args)
		if res.Err != nil {
			switch res.Err.Status {
			case 400, 404, 409:
			default:
				t.Fatalf("%s %s: status %d %s: %s", tool.Name, args, res.Err.Status, res.Err.Code, res.Err.Message)
			}
			if res.Err.Code == "" || res.Err.Message == "" {
				t.Fatalf("%s: untyped error %+v", tool.Name, res.Err)
			}
			return
		}
		if !json.Valid(res.Output) {
			t.Fatalf("%s %s: output is not JSON: %q", tool.Name, args, res.Output)
		}
	})
}
