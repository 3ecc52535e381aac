package systemtools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
)

// The host's own tools check their arguments where they run, as the SDK
// does for a plugin's: nothing reaches a handler unvalidated, and no
// pipeline stage is needed for it (docs/decisions.md D34).
func TestSystemToolsValidateTheirArguments(t *testing.T) {
	reg := registry.New()
	if err := Register(reg); err != nil {
		t.Fatal(err)
	}
	h := New(Config{})
	tool, ok := reg.Get("server_ping")
	if !ok {
		t.Fatal("server_ping is not registered")
	}
	for args, want := range map[string]int{
		``:                          200,
		`null`:                      200,
		`{}`:                        200,
		`{"unexpected":1}`:          400,
		"{\"x\":\"a\xffb\"}":        400,
		`{"x":"\ud800"}`:            400,
		`[1]`:                       400,
		`{"deep":[[[[[[[[]]]]]]]]}`: 400,
	} {
		out := h.Call(context.Background(), &pipeline.Call{Name: "server_ping", Tool: tool, Args: json.RawMessage(args)})
		if out.Status != want {
			t.Errorf("server_ping %q: %d %+v, want %d", args, out.Status, out.Err, want)
		}
	}
}
