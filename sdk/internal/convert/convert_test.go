package convert

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
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

var everyCaller = seam.Caller{ID: "agent-7", Source: "api_key", ClientSessionID: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"}

// TestCallToProtoCarriesEveryField: every field of a call reaches the
// request.
func TestCallToProtoCarriesEveryField(t *testing.T) {
	c := seam.Call{
		Tool: "task_get", Args: json.RawMessage(`{"id":"T-1"}`), Caller: everyCaller, RequestID: "7",
		IdempotencyKey: "sess:7", IdempotencyClient: true, Replay: true, WantsProgress: true, LogLevel: "debug", ClientChannel: 42, ToolChannel: 9,
		Task:        &seam.TaskParams{TTL: time.Minute},
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "vendor=x",
	}
	protoEqual(t, "request", CallToProto(c), &pb.CallToolRequest{
		Tool: "task_get", Arguments: []byte(`{"id":"T-1"}`), RequestId: "7", WantsProgress: true,
		IdempotencyKey: "sess:7", IdempotencyClient: true, Replay: true, LogLevel: "debug", ClientChannel: 42, ToolChannel: 9, Task: &pb.TaskParams{TtlMs: 60000},
		Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Tracestate: "vendor=x",
		Caller: &pb.Caller{Id: "agent-7", Source: "api_key", SessionId: "s-1", ClientName: "cli", ClientVersion: "1.2", Scopes: []string{"read", "write"}, Project: "proj"},
	})
	protoEqual(t, "empty call", CallToProto(seam.Call{}), &pb.CallToolRequest{Caller: &pb.Caller{}})
}

func TestCallerToProto(t *testing.T) {
	protoEqual(t, "empty caller", CallerToProto(seam.Caller{}), &pb.Caller{})
}

// TestResultFromProto: success with every field, the defaults for an unset
// status and an empty output, a typed error with and without details, and
// a nil result.
func TestResultFromProto(t *testing.T) {
	blocks := []*pb.Content{
		{Type: "image", Data: []byte{1, 2}, MimeType: "image/png"},
		{Type: "resource_link", Text: "readme", Uri: "cairn://readme", MimeType: "text/markdown"},
		{Type: "resource", Text: "hi", Uri: "cairn://x", MimeType: "text/plain"},
	}
	got := ResultFromProto(&pb.ToolResult{Output: []byte(`{"ok":true}`), Status: 201, Content: blocks})
	deepEqual(t, "success", got, &seam.Result{Output: json.RawMessage(`{"ok":true}`), Status: 201, Content: []seam.Content{
		{Type: "image", Data: []byte{1, 2}, MIMEType: "image/png"},
		{Type: "resource_link", Text: "readme", URI: "cairn://readme", MIMEType: "text/markdown"},
		{Type: "resource", Text: "hi", URI: "cairn://x", MIMEType: "text/plain"},
	}})

	deepEqual(t, "defaults", ResultFromProto(&pb.ToolResult{}), &seam.Result{Output: json.RawMessage(`{}`), Status: 200})
	deepEqual(t, "nil result", ResultFromProto(nil), &seam.Result{Output: json.RawMessage(`{}`), Status: 200})

	failed := ResultFromProto(&pb.ToolResult{Output: []byte(`{"ignored":1}`), Error: &pb.ToolError{Code: "ERR_NOT_FOUND", Message: "no task T-9", Details: []byte(`{"field":"task_id","constraint":"exists"}`), Status: 404}})
	deepEqual(t, "typed error", failed, &seam.Result{Status: 404, Err: &errs.Error{Code: "ERR_NOT_FOUND", Message: "no task T-9", Status: 404, Details: map[string]any{"field": "task_id", "constraint": "exists"}}})

	for name, details := range map[string][]byte{"none": nil, "null": []byte(`null`), "not an object": []byte(`[1]`)} {
		e := ResultFromProto(&pb.ToolResult{Error: &pb.ToolError{Code: "ERR_X", Message: "m", Details: details}})
		if e.Status != 500 || e.Err.Status != 500 || e.Err.Details == nil || len(e.Err.Details) != 0 {
			t.Fatalf("error with %s details: %+v %+v", name, e, e.Err)
		}
	}
}

func TestErrorConversions(t *testing.T) {
	if ErrorFromProto(nil) != nil || ErrorToProto(nil) != nil {
		t.Fatal("nil error converted to a value")
	}
	e := errs.New(409, errs.Conflict, "busy").With("retryable", true)
	deepEqual(t, "round trip", ErrorFromProto(ErrorToProto(e)), e)
	protoEqual(t, "empty details are an object", ErrorToProto(&errs.Error{Code: "C", Status: 400}), &pb.ToolError{Code: "C", Status: 400, Details: []byte(`{}`)})
}

func TestContentFromProto(t *testing.T) {
	c := seam.Content{Type: "audio", Text: "t", MIMEType: "audio/wav", Data: []byte{9}, URI: "u"}
	deepEqual(t, "content", ContentFromProto(&pb.Content{Type: "audio", Text: "t", MimeType: "audio/wav", Data: []byte{9}, Uri: "u"}), c)
	deepEqual(t, "nil content", ContentFromProto(nil), seam.Content{})
}

// TestProgressAndLogLines: the protocol's progress and log events keep
// every field; nil reads as the empty value.
func TestProgressAndLogLines(t *testing.T) {
	deepEqual(t, "progress", ProgressFromProto(&pb.Progress{Progress: 3, Total: 10, Message: "three"}), seam.Progress{Progress: 3, Total: 10, Message: "three"})
	deepEqual(t, "nil progress", ProgressFromProto(nil), seam.Progress{})
	deepEqual(t, "log line", LogLineFromProto(&pb.LogMessage{Level: "warning", Logger: "core", Data: []byte(`{"message":"m"}`)}), seam.LogLine{Level: "warning", Logger: "core", Data: json.RawMessage(`{"message":"m"}`)})
}

// TestToolFromProto: every field of a described tool reaches the seam's
// tool, and annotations the plugin left out are nil.
func TestToolFromProto(t *testing.T) {
	yes, no := true, false
	desc := &pb.Tool{
		Name: "task_get", Title: "Get a task", Description: "Reads one task.", Toolset: "tasks",
		InputSchema: []byte(`{"type":"object"}`), OutputSchema: []byte(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		HonoursIdempotency: true, TaskSupport: "optional",
		Annotations: &pb.Annotations{ReadOnly: &yes, Destructive: &no, Idempotent: &yes, OpenWorld: &no, Title: "Annotated"},
	}
	deepEqual(t, "tool", ToolFromProto(desc), seam.Tool{
		Name: "task_get", Title: "Get a task", Description: "Reads one task.", Toolset: "tasks",
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
		HonoursIdempotency: true, TaskSupport: "optional",
		Annotations: &seam.Annotations{ReadOnly: true, Idempotent: true, Title: "Annotated"},
	})
	deepEqual(t, "bare tool", ToolFromProto(&pb.Tool{Name: "x"}), seam.Tool{Name: "x"})
}

func TestDescriptionFromProto(t *testing.T) {
	got := DescriptionFromProto(&pb.DescribeResponse{Name: "core", Version: "1.0.0", ProtocolVersion: 1, Description: "d", Subscriptions: []string{"task.*"}, SdkVersion: "0.9", Tools: []*pb.Tool{{Name: "t"}}})
	deepEqual(t, "description", got, seam.Description{Name: "core", Version: "1.0.0", ProtocolVersion: 1, Description: "d", Subscriptions: []string{"task.*"}, SDKVersion: "0.9"})
	deepEqual(t, "nil description", DescriptionFromProto(nil), seam.Description{})
}

func TestPromptsFromProto(t *testing.T) {
	prompts := []seam.Prompt{
		{Name: "review", Title: "Review", Description: "Reviews a change.", Arguments: []seam.PromptArgument{{Name: "change", Description: "what", Required: true}, {Name: "depth"}}},
		{Name: "bare"},
	}
	listing := &pb.ListPromptsResponse{Prompts: []*pb.Prompt{
		{Name: "review", Title: "Review", Description: "Reviews a change.", Arguments: []*pb.PromptArgument{{Name: "change", Description: "what", Required: true}, {Name: "depth"}}},
		{Name: "bare"},
	}}
	deepEqual(t, "prompts", PromptsFromProto(listing), prompts)
	deepEqual(t, "nil listing", PromptsFromProto(nil), []seam.Prompt{})

	img := seam.Content{Type: "image", Data: []byte{1}, MIMEType: "image/png"}
	res := seam.PromptResult{Description: "d", Messages: []seam.PromptMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Content: &img}}}
	rendered := &pb.GetPromptResponse{Description: "d", Messages: []*pb.PromptMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Content: &pb.Content{Type: "image", Data: []byte{1}, MimeType: "image/png"}}}}
	deepEqual(t, "rendered prompt", PromptResultFromProto(rendered), res)
	fail := seam.PromptResult{Err: errs.Invalid("phase", "required", "phase is required")}
	deepEqual(t, "prompt error", PromptResultFromProto(&pb.GetPromptResponse{Error: ErrorToProto(fail.Err)}), fail)
	deepEqual(t, "nil prompt", PromptResultFromProto(nil), seam.PromptResult{})
}

func TestCompletionConversions(t *testing.T) {
	req := seam.CompleteRequest{RefType: "prompt", RefName: "review", Argument: "change", Value: "PR", Context: map[string]string{"depth": "1"}}
	protoEqual(t, "request", CompleteRequestToProto(req), &pb.CompleteRequest{RefType: "prompt", RefName: "review", Argument: "change", Value: "PR", Context: map[string]string{"depth": "1"}})
	c := seam.Completion{Values: []string{"PR 7", "PR 8"}, Total: 12, HasMore: true}
	deepEqual(t, "completion", CompletionFromProto(&pb.CompleteResponse{Values: []string{"PR 7", "PR 8"}, Total: 12, HasMore: true}), c)
	// No values is an empty list, never nil (MCP wants an array).
	deepEqual(t, "empty completion", CompletionFromProto(&pb.CompleteResponse{}), seam.Completion{Values: []string{}})
	deepEqual(t, "nil completion", CompletionFromProto(nil), seam.Completion{Values: []string{}})
}

func TestResourcesFromProto(t *testing.T) {
	r := seam.Resources{
		Resources: []seam.Resource{{URI: "cairn://readme", Name: "readme", Description: "d", MIMEType: "text/markdown"}},
		Templates: []seam.ResourceTemplate{{URITemplate: "cairn://tasks/{id}", Name: "task", Description: "t", MIMEType: "application/json"}},
	}
	listing := &pb.ListResourcesResponse{
		Resources: []*pb.Resource{{Uri: "cairn://readme", Name: "readme", Description: "d", MimeType: "text/markdown"}},
		Templates: []*pb.ResourceTemplate{{UriTemplate: "cairn://tasks/{id}", Name: "task", Description: "t", MimeType: "application/json"}},
	}
	deepEqual(t, "listing", ResourcesFromProto(listing), r)
	deepEqual(t, "nil listing", ResourcesFromProto(nil), seam.Resources{})

	read := seam.ReadResult{Contents: []seam.ResourceContents{{URI: "a", MIMEType: "text/plain", Text: "x"}, {URI: "b", MIMEType: "image/png", Blob: []byte{0}}}}
	contents := &pb.ReadResourceResponse{Contents: []*pb.ResourceContents{{Uri: "a", MimeType: "text/plain", Text: "x"}, {Uri: "b", MimeType: "image/png", Blob: []byte{0}}}}
	deepEqual(t, "read", ReadResultFromProto(contents), read)
	missing := seam.ReadResult{Err: errs.New(404, errs.NotFound, "no such resource")}
	deepEqual(t, "read error", ReadResultFromProto(&pb.ReadResourceResponse{Error: ErrorToProto(missing.Err)}), missing)
	deepEqual(t, "nil read", ReadResultFromProto(nil), seam.ReadResult{})
}

func TestHealthFromProto(t *testing.T) {
	h := seam.Health{Status: "degraded", Message: "db slow", Details: json.RawMessage(`{"db":{"ms":900}}`)}
	deepEqual(t, "health", HealthFromProto(&pb.HealthResponse{Status: "degraded", Message: "db slow", Details: []byte(`{"db":{"ms":900}}`)}), h)
	deepEqual(t, "nil health", HealthFromProto(nil), seam.Health{})
}

func TestAskConversions(t *testing.T) {
	a := seam.Ask{Channel: 3, Method: "elicitation/create", Params: json.RawMessage(`{"message":"which?"}`)}
	deepEqual(t, "ask", AskFromProto(&pb.AskClientRequest{ClientChannel: 3, Method: "elicitation/create", Params: []byte(`{"message":"which?"}`)}), a)
	deepEqual(t, "nil ask", AskFromProto(nil), seam.Ask{})

	protoEqual(t, "answer", AnswerToProto(json.RawMessage(`{"action":"accept"}`), nil), &pb.AskClientResponse{Result: []byte(`{"action":"accept"}`)})
	refusal := errs.New(501, errs.ClientUnsupported, "no sampling").With("capability", "sampling")
	answer := AnswerToProto(nil, refusal)
	if answer.Result != nil {
		t.Fatalf("a refusal carried a result: %s", answer.Result)
	}
	deepEqual(t, "refusal", ErrorFromProto(answer.Error), refusal)
}

// TestTaskConversions: a task's state, an outcome carrying one, and a task
// operation's request and response keep every field.
func TestTaskConversions(t *testing.T) {
	st := &seam.TaskState{
		ID: "vision.0123", Tool: "computer_agent_run", Status: "failed", StatusMessage: "interrupted: gone",
		CreatedAt: "2026-01-02T03:04:05Z", UpdatedAt: "2026-01-02T03:05:05Z", TTL: time.Hour, PollInterval: time.Second, Interrupted: true,
	}
	stProto := &pb.TaskState{
		TaskId: "vision.0123", Tool: "computer_agent_run", Status: "failed", StatusMessage: "interrupted: gone",
		CreatedAt: "2026-01-02T03:04:05Z", LastUpdatedAt: "2026-01-02T03:05:05Z", TtlMs: 3600000, PollIntervalMs: 1000, Interrupted: true,
	}
	deepEqual(t, "task state", *TaskStateFromProto(stProto), *st)
	if TaskStateFromProto(nil) != nil {
		t.Fatal("a nil task state converts to a task")
	}
	out := ResultFromProto(&pb.ToolResult{Task: stProto, Status: 202})
	if out.Task == nil || out.Task.ID != st.ID || out.Output != nil || out.Status != 202 {
		t.Fatalf("an outcome with a task reads back as %+v", out)
	}
	protoEqual(t, "task request", TaskRequestToProto(seam.TaskRequest{Op: "list", TaskID: "vision.1", Cursor: "c", Caller: everyCaller}),
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

func TestCallbackConversions(t *testing.T) {
	cb := seam.ToolCallback{Channel: 4, Tool: "task_get", Args: json.RawMessage(`{"task_id":"T-1"}`), IdempotencyKey: "/t/1"}
	deepEqual(t, "callback", CallbackFromProto(CallbackToProto(cb)), cb)
	deepEqual(t, "nil callback", CallbackFromProto(nil), seam.ToolCallback{})

	ok := seam.Result{Output: json.RawMessage(`{"task_id":"T-1"}`), Status: 201}
	deepEqual(t, "output", CallbackResultFromProto(CallbackResultToProto(ok)), ok)
	refusal := errs.NotFoundf(errs.TaskNotFound, "task_id", "no task T-9")
	back := CallbackResultFromProto(CallbackResultToProto(seam.Result{Err: refusal, Status: 404}))
	if back.Output != nil || back.Status != 404 {
		t.Fatalf("refusal came back as %+v", back)
	}
	deepEqual(t, "refusal", back.Err, refusal)
}
