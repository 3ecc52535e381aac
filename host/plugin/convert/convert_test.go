package convert

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/plugin"
	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

func protoEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func deepEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

var everyCaller = pipeline.Caller{ID: "agent-7", Source: "api_key", SessionID: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"}

// TestCallToProtoCarriesEveryField: every field of a call reaches the
// request, progress and log level only when the call forwards them.
func TestCallToProtoCarriesEveryField(t *testing.T) {
	c := &pipeline.Call{
		Name: "task_get", Args: json.RawMessage(`{"id":"T-1"}`), Caller: everyCaller, RequestID: "7",
		IdempotencyKey: "sess:7", Replay: true, LogLevel: "debug",
		Progress: func(float64, float64, string) {}, Log: func(string, string, json.RawMessage) {},
		Task:        &pipeline.TaskParams{TTL: time.Minute},
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "vendor=x",
	}
	req := CallToProto(c, 42)
	protoEqual(t, "request", req, &pb.CallToolRequest{
		Tool: "task_get", Arguments: []byte(`{"id":"T-1"}`), RequestId: "7", WantsProgress: true,
		IdempotencyKey: "sess:7", Replay: true, LogLevel: "debug", ClientChannel: 42, Task: &pb.TaskParams{TtlMs: 60000},
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "vendor=x",
		Caller: &pb.Caller{Id: "agent-7", Source: "api_key", SessionId: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"},
	})

	// Without callbacks the request asks for neither progress nor logs,
	// whatever level the call names.
	quiet := CallToProto(&pipeline.Call{Name: "x", LogLevel: "debug"}, 0)
	if quiet.WantsProgress || quiet.LogLevel != "" || quiet.ClientChannel != 0 {
		t.Fatalf("a call without callbacks asked for %v", quiet)
	}
}

func TestCallerToProto(t *testing.T) {
	protoEqual(t, "empty caller", callerToProto(pipeline.Caller{}), &pb.Caller{})
}

// TestOutcomeFromProto: success with every field, the defaults for an unset
// status and an empty output, a typed error with and without details, and
// a nil result.
func TestOutcomeFromProto(t *testing.T) {
	blocks := []*pb.Content{
		{Type: "image", Data: []byte{1, 2}, MimeType: "image/png"},
		{Type: "resource_link", Text: "readme", Uri: "cairn://readme", MimeType: "text/markdown"},
		{Type: "resource", Text: "hi", Uri: "cairn://x", MimeType: "text/plain"},
	}
	got := OutcomeFromProto(&pb.ToolResult{Output: []byte(`{"ok":true}`), Status: 201, Content: blocks})
	deepEqual(t, "success", got, &pipeline.Outcome{Output: json.RawMessage(`{"ok":true}`), Status: 201, Content: []pipeline.Content{
		{Type: "image", Data: []byte{1, 2}, MIMEType: "image/png"},
		{Type: "resource_link", Text: "readme", URI: "cairn://readme", MIMEType: "text/markdown"},
		{Type: "resource", Text: "hi", URI: "cairn://x", MIMEType: "text/plain"},
	}})

	deepEqual(t, "defaults", OutcomeFromProto(&pb.ToolResult{}), &pipeline.Outcome{Output: json.RawMessage(`{}`), Status: 200})
	deepEqual(t, "nil result", OutcomeFromProto(nil), &pipeline.Outcome{Output: json.RawMessage(`{}`), Status: 200})

	failed := OutcomeFromProto(&pb.ToolResult{Output: []byte(`{"ignored":1}`), Error: &pb.ToolError{Code: "ERR_NOT_FOUND", Message: "no task T-9", Details: []byte(`{"field":"task_id","constraint":"exists"}`), Status: 404}})
	deepEqual(t, "typed error", failed, &pipeline.Outcome{Status: 404, Err: &errs.Error{Code: "ERR_NOT_FOUND", Message: "no task T-9", Status: 404, Details: map[string]any{"field": "task_id", "constraint": "exists"}}})

	for name, details := range map[string][]byte{"none": nil, "null": []byte(`null`), "not an object": []byte(`[1]`)} {
		e := OutcomeFromProto(&pb.ToolResult{Error: &pb.ToolError{Code: "ERR_X", Message: "m", Details: details}})
		if e.Status != 500 || e.Err.Status != 500 || e.Err.Details == nil || len(e.Err.Details) != 0 {
			t.Fatalf("error with %s details: %+v %+v", name, e, e.Err)
		}
	}
}

func TestErrorConversions(t *testing.T) {
	if errorFromProto(nil) != nil || errorToProto(nil) != nil {
		t.Fatal("nil error converted to a value")
	}
	e := errs.New(409, errs.Conflict, "busy").With("retryable", true)
	deepEqual(t, "round trip", errorFromProto(errorToProto(e)), e)
	protoEqual(t, "empty details are an object", errorToProto(&errs.Error{Code: "C", Status: 400}), &pb.ToolError{Code: "C", Status: 400, Details: []byte(`{}`)})
}

func TestContentFromProto(t *testing.T) {
	c := pipeline.Content{Type: "audio", Text: "t", MIMEType: "audio/wav", Data: []byte{9}, URI: "u"}
	deepEqual(t, "content", contentFromProto(&pb.Content{Type: "audio", Text: "t", MimeType: "audio/wav", Data: []byte{9}, Uri: "u"}), c)
	deepEqual(t, "nil content", contentFromProto(nil), pipeline.Content{})
}

// TestProgressAndLogCallbacks: the protocol's events reach the call's own
// callbacks with every field; a call without callbacks has none to adapt.
func TestProgressAndLogCallbacks(t *testing.T) {
	var got []any
	c := &pipeline.Call{
		Progress: func(p, total float64, msg string) { got = append(got, p, total, msg) },
		Log:      func(level, logger string, data json.RawMessage) { got = append(got, level, logger, string(data)) },
	}
	ProgressFunc(c)(&pb.Progress{Progress: 3, Total: 10, Message: "three"})
	LogFunc(c)(&pb.LogMessage{Level: "warning", Logger: "core", Data: json.RawMessage(`{"message":"m"}`)})
	ProgressFunc(c)(nil)
	deepEqual(t, "events", got, []any{3.0, 10.0, "three", "warning", "core", `{"message":"m"}`, 0.0, 0.0, ""})
	if ProgressFunc(&pipeline.Call{}) != nil || LogFunc(&pipeline.Call{}) != nil {
		t.Fatal("a call without callbacks got adapters")
	}
}

// TestToolFromProto: every field of a described tool reaches the registry
// (the published output schema, success or error envelope, the plugin's
// own kept as the success schema), and the defaults for what a plugin left out.
func TestToolFromProto(t *testing.T) {
	yes, no := true, false
	desc := &pb.Tool{
		Name: "task_get", Title: "Get a task", Description: "Reads one task.", Toolset: "tasks",
		InputSchema: []byte(`{"type":"object"}`), OutputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		HonoursIdempotency: true, TaskSupport: "optional",
		Annotations: &pb.Annotations{ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no, Title: "Get a task"},
	}
	rt, err := ToolFromProto(desc, false)
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

	bare, err := ToolFromProto(&pb.Tool{Name: "x", Annotations: &pb.Annotations{Title: "From annotations"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(bare.InputSchema) != `{"type":"object"}` || bare.Toolset != "default" || bare.Title != "From annotations" || bare.ReadOnly {
		t.Fatalf("defaults: %+v", bare)
	}
}

func TestDescriptionFromProto(t *testing.T) {
	got := DescriptionFromProto(&pb.DescribeResponse{Name: "core", Version: "1.0.0", ProtocolVersion: 1, Description: "d", Subscriptions: []string{"task.*"}, SdkVersion: "0.9", Tools: []*pb.Tool{{Name: "t"}}})
	deepEqual(t, "description", got, plugin.Description{Name: "core", Version: "1.0.0", ProtocolVersion: 1, Description: "d", Subscriptions: []string{"task.*"}, SDKVersion: "0.9"})
	deepEqual(t, "nil description", DescriptionFromProto(nil), plugin.Description{})
}

func TestPromptsFromProto(t *testing.T) {
	prompts := []plugin.Prompt{
		{Name: "review", Title: "Review", Description: "Reviews a change.", Arguments: []plugin.PromptArgument{{Name: "change", Description: "what", Required: true}, {Name: "depth"}}},
		{Name: "bare"},
	}
	listing := &pb.ListPromptsResponse{Prompts: []*pb.Prompt{
		{Name: "review", Title: "Review", Description: "Reviews a change.", Arguments: []*pb.PromptArgument{{Name: "change", Description: "what", Required: true}, {Name: "depth"}}},
		{Name: "bare"},
	}}
	deepEqual(t, "prompts", PromptsFromProto(listing), prompts)
	deepEqual(t, "nil listing", PromptsFromProto(nil), []plugin.Prompt{})

	img := pipeline.Content{Type: "image", Data: []byte{1}, MIMEType: "image/png"}
	res := plugin.PromptResult{Description: "d", Messages: []plugin.PromptMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Content: &img}}}
	rendered := &pb.GetPromptResponse{Description: "d", Messages: []*pb.PromptMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Content: &pb.Content{Type: "image", Data: []byte{1}, MimeType: "image/png"}}}}
	deepEqual(t, "rendered prompt", PromptResultFromProto(rendered), res)
	fail := plugin.PromptResult{Err: errs.Invalid("phase", "required", "phase is required")}
	deepEqual(t, "prompt error", PromptResultFromProto(&pb.GetPromptResponse{Error: errorToProto(fail.Err)}), fail)
	deepEqual(t, "nil prompt", PromptResultFromProto(nil), plugin.PromptResult{})
}

func TestCompletionConversions(t *testing.T) {
	req := plugin.CompleteRequest{RefType: "prompt", RefName: "review", Argument: "change", Value: "PR", Context: map[string]string{"depth": "1"}}
	protoEqual(t, "request", CompleteRequestToProto(req), &pb.CompleteRequest{RefType: "prompt", RefName: "review", Argument: "change", Value: "PR", Context: map[string]string{"depth": "1"}})
	c := plugin.Completion{Values: []string{"PR 7", "PR 8"}, Total: 12, HasMore: true}
	deepEqual(t, "completion", CompletionFromProto(&pb.CompleteResponse{Values: []string{"PR 7", "PR 8"}, Total: 12, HasMore: true}), c)
	// No values is an empty list, never nil (MCP wants an array).
	deepEqual(t, "empty completion", CompletionFromProto(&pb.CompleteResponse{}), plugin.Completion{Values: []string{}})
	deepEqual(t, "nil completion", CompletionFromProto(nil), plugin.Completion{Values: []string{}})
}

func TestResourcesFromProto(t *testing.T) {
	r := plugin.Resources{
		Resources: []plugin.Resource{{URI: "cairn://readme", Name: "readme", Description: "d", MIMEType: "text/markdown"}},
		Templates: []plugin.ResourceTemplate{{URITemplate: "cairn://tasks/{id}", Name: "task", Description: "t", MIMEType: "application/json"}},
	}
	listing := &pb.ListResourcesResponse{
		Resources: []*pb.Resource{{Uri: "cairn://readme", Name: "readme", Description: "d", MimeType: "text/markdown"}},
		Templates: []*pb.ResourceTemplate{{UriTemplate: "cairn://tasks/{id}", Name: "task", Description: "t", MimeType: "application/json"}},
	}
	deepEqual(t, "listing", ResourcesFromProto(listing), r)
	deepEqual(t, "nil listing", ResourcesFromProto(nil), plugin.Resources{})

	read := plugin.ReadResult{Contents: []plugin.ResourceContents{{URI: "a", MIMEType: "text/plain", Text: "x"}, {URI: "b", MIMEType: "image/png", Blob: []byte{0}}}}
	contents := &pb.ReadResourceResponse{Contents: []*pb.ResourceContents{{Uri: "a", MimeType: "text/plain", Text: "x"}, {Uri: "b", MimeType: "image/png", Blob: []byte{0}}}}
	deepEqual(t, "read", ReadResultFromProto(contents), read)
	missing := plugin.ReadResult{Err: errs.New(404, errs.NotFound, "no such resource")}
	deepEqual(t, "read error", ReadResultFromProto(&pb.ReadResourceResponse{Error: errorToProto(missing.Err)}), missing)
	deepEqual(t, "nil read", ReadResultFromProto(nil), plugin.ReadResult{})
}

func TestHealthFromProto(t *testing.T) {
	h := plugin.Health{Status: "degraded", Message: "db slow", Details: json.RawMessage(`{"db":{"ms":900}}`)}
	deepEqual(t, "health", HealthFromProto(&pb.HealthResponse{Status: "degraded", Message: "db slow", Details: []byte(`{"db":{"ms":900}}`)}), h)
	deepEqual(t, "nil health", HealthFromProto(nil), plugin.Health{})
}

func TestAskConversions(t *testing.T) {
	a := plugin.Ask{Channel: 3, Method: "elicitation/create", Params: json.RawMessage(`{"message":"which?"}`)}
	deepEqual(t, "ask", AskFromProto(&pb.AskClientRequest{ClientChannel: 3, Method: "elicitation/create", Params: []byte(`{"message":"which?"}`)}), a)
	deepEqual(t, "nil ask", AskFromProto(nil), plugin.Ask{})

	protoEqual(t, "answer", AnswerToProto(json.RawMessage(`{"action":"accept"}`), nil), &pb.AskClientResponse{Result: []byte(`{"action":"accept"}`)})
	refusal := errs.New(501, errs.ClientUnsupported, "no sampling").With("capability", "sampling")
	answer := AnswerToProto(nil, refusal)
	if answer.Result != nil {
		t.Fatalf("a refusal carried a result: %s", answer.Result)
	}
	deepEqual(t, "refusal", errorFromProto(answer.Error), refusal)
}

// TestTaskConversions: a task's state, an outcome carrying one, and a task
// operation's request and response keep every field.
func TestTaskConversions(t *testing.T) {
	st := &pipeline.TaskState{
		ID: "vision.0123", Tool: "computer_agent_run", Status: "failed", StatusMessage: "interrupted: gone",
		CreatedAt: "2026-01-02T03:04:05Z", UpdatedAt: "2026-01-02T03:05:05Z", TTL: time.Hour, PollInterval: time.Second, Interrupted: true,
	}
	stProto := &pb.TaskState{
		TaskId: "vision.0123", Tool: "computer_agent_run", Status: "failed", StatusMessage: "interrupted: gone",
		CreatedAt: "2026-01-02T03:04:05Z", LastUpdatedAt: "2026-01-02T03:05:05Z", TtlMs: 3600000, PollIntervalMs: 1000, Interrupted: true,
	}
	deepEqual(t, "task state", *taskStateFromProto(stProto), *st)
	if taskStateFromProto(nil) != nil {
		t.Fatal("a nil task state converts to a task")
	}
	out := OutcomeFromProto(&pb.ToolResult{Task: stProto, Status: 202})
	if out.Task == nil || out.Task.ID != st.ID || out.Output != nil || out.Status != 202 {
		t.Fatalf("an outcome with a task reads back as %+v", out)
	}
	protoEqual(t, "task request", TaskRequestToProto(plugin.TaskRequest{Op: "list", TaskID: "vision.1", Cursor: "c", Caller: everyCaller}),
		&pb.TaskRequest{Op: "list", TaskId: "vision.1", Cursor: "c", Caller: &pb.Caller{Id: "agent-7", Source: "api_key", SessionId: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"}})
	resp := TaskResponseFromProto(&pb.TaskResponse{
		Task: stProto, Tasks: []*pb.TaskState{stProto}, NextCursor: "n",
		Result: &pb.ToolResult{Output: []byte(`{"a":1}`), Status: 200},
		Error:  &pb.ToolError{Code: "ERR_NOT_FOUND", Message: "no", Status: 404},
	})
	if resp.Task.ID != st.ID || len(resp.Tasks) != 1 || resp.Tasks[0] != *st || resp.NextCursor != "n" ||
		string(resp.Result.Output) != `{"a":1}` || resp.Err.Code != "ERR_NOT_FOUND" {
		t.Fatalf("task response %+v", resp)
	}
}
