package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/pipeline"
)

// The host's own tools check their arguments where they run, as the SDK
// does for a plugin's: nothing reaches a handler unvalidated, and no
// pipeline stage is needed for it (docs/decisions.md D34).
func TestSystemToolsValidateTheirArguments(t *testing.T) {
	h, err := New(config.Settings{Root: t.TempDir(), Mode: config.ModeMinimal}, Options{Executable: "/nonexistent", Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	tool, ok := h.reg.Get("server_ping")
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
		out := h.dispatch(context.Background(), &pipeline.Call{Name: "server_ping", Tool: tool, Args: json.RawMessage(args)})
		if out.Status != want {
			t.Errorf("server_ping %q: %d %+v, want %d", args, out.Status, out.Err, want)
		}
	}
}
