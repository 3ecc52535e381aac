package supervisor

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/schema"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

func deepEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

// TestCallToSeamCarriesEveryField: every field of a call reaches the
// seam's call, progress and log level only when the call forwards them.
func TestCallToSeamCarriesEveryField(t *testing.T) {
	caller := seam.Caller{ID: "agent-7", Source: "api_key", ClientSessionID: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"}
	c := &pipeline.Call{
		Name: "task_get", Args: json.RawMessage(`{"id":"T-1"}`), Caller: caller, RequestID: "7",
		IdempotencyKey: "sess:7", IdempotencyClient: true, Replay: true, LogLevel: "debug",
		Progress: func(float64, float64, string) {}, Log: func(string, string, json.RawMessage) {},
		Task:        &seam.TaskParams{TTL: time.Minute},
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "vendor=x",
	}
	deepEqual(t, "call", callToSeam(c, CallOptions{ClientChannel: 42, ToolChannel: 9}), seam.Call{
		Tool: "task_get", Args: json.RawMessage(`{"id":"T-1"}`), Caller: caller, RequestID: "7",
		IdempotencyKey: "sess:7", IdempotencyClient: true, Replay: true, WantsProgress: true, LogLevel: "debug", ClientChannel: 42, ToolChannel: 9,
		Task:        &seam.TaskParams{TTL: time.Minute},
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "vendor=x",
	})
	// Without callbacks the call asks for neither progress nor logs,
	// whatever level it names.
	quiet := callToSeam(&pipeline.Call{Name: "x", LogLevel: "debug"}, CallOptions{})
	if quiet.WantsProgress || quiet.LogLevel != "" || quiet.ClientChannel != 0 || quiet.ToolChannel != 0 {
		t.Fatalf("a call without callbacks asked for %+v", quiet)
	}
}

// TestProgressAndLogCallbacks: the seam's progress and log lines reach
// the call's own callbacks with every field; a call without callbacks has
// none to adapt.
func TestProgressAndLogCallbacks(t *testing.T) {
	var got []any
	c := &pipeline.Call{
		Progress: func(p, total float64, msg string) { got = append(got, p, total, msg) },
		Log:      func(level, logger string, data json.RawMessage) { got = append(got, level, logger, string(data)) },
	}
	progressFunc(c)(seam.Progress{Progress: 3, Total: 10, Message: "three"})
	logFunc(c)(seam.LogLine{Level: "warning", Logger: "core", Data: json.RawMessage(`{"message":"m"}`)})
	deepEqual(t, "events", got, []any{3.0, 10.0, "three", "warning", "core", `{"message":"m"}`})
	if progressFunc(&pipeline.Call{}) != nil || logFunc(&pipeline.Call{}) != nil {
		t.Fatal("a call without callbacks got adapters")
	}
}

// TestToolFromSeam: every field of a described tool reaches the registry
// (the published output schema, success or error envelope, the plugin's
// own kept as the success schema), and the defaults for what a plugin left out.
func TestToolFromSeam(t *testing.T) {
	desc := seam.Tool{
		Name: "task_get", Title: "Get a task", Description: "Reads one task.", Toolset: "tasks",
		InputSchema: []byte(`{"type":"object"}`), OutputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		HonoursIdempotency: true, TaskSupport: "optional",
		Annotations: &seam.Annotations{ReadOnly: true, Idempotent: true, Title: "Get a task"},
	}
	rt, err := toolFromSeam(desc, false)
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := schema.Published(desc.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Name != "task_get" || rt.Title != "Get a task" || rt.Description != "Reads one task." || rt.Toolset != "tasks" ||
		string(rt.InputSchema) != `{"type":"object"}` || string(rt.SuccessSchema) != string(desc.OutputSchema) ||
		string(rt.OutputSchema) != string(wrapped) || !rt.HonoursIdempotency || rt.TaskSupport != "optional" ||
		!rt.ReadOnly || rt.Destructive || !rt.Idempotent || rt.OpenWorld || rt.Validator != nil {
		t.Fatalf("tool = %+v", rt)
	}

	bare, err := toolFromSeam(seam.Tool{Name: "x", Annotations: &seam.Annotations{Title: "From annotations"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(bare.InputSchema) != `{"type":"object"}` || bare.Toolset != "default" || bare.Title != "From annotations" || bare.ReadOnly {
		t.Fatalf("defaults: %+v", bare)
	}
}
