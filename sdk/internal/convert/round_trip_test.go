package convert

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The host and the plugin convert with the same functions, one per type
// and direction: what one end builds, the other reads back as it was
// sent, every field set.

var everyState = seam.TaskState{
	ID: "t-1", Tool: "waiter_wait", Status: "completed", StatusMessage: "done",
	CreatedAt: "2026-01-02T03:04:05.123Z", UpdatedAt: "2026-01-02T03:04:06Z",
	TTL: time.Hour, PollInterval: time.Second, Interrupted: true,
}

var everyContent = seam.Content{Type: "resource", Text: "t", Data: []byte{1, 2}, MIMEType: "image/png", URI: "sdd://x"}

func TestCallRoundTrip(t *testing.T) {
	c := seam.Call{
		Tool: "task_get", Args: json.RawMessage(`{"id":"T-1"}`), Caller: everyCaller, RequestID: "7",
		IdempotencyKey: "sess:7", IdempotencyClient: true, Replay: true, WantsProgress: true, LogLevel: "debug", ClientChannel: 42, ToolChannel: 9,
		Task:        &seam.TaskParams{TTL: time.Minute},
		TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "vendor=x",
	}
	deepEqual(t, "call", CallFromProto(CallToProto(c)), c)
	c.Task = nil
	deepEqual(t, "call without a task", CallFromProto(CallToProto(c)), c)
	deepEqual(t, "a request without a caller", CallFromProto(&pb.CallToolRequest{Tool: "x"}).Caller, seam.Caller{ID: "unknown", Source: "unknown"})
}

func TestResultRoundTrip(t *testing.T) {
	ok := seam.Result{Output: json.RawMessage(`{"a":1}`), Status: 201, Content: []seam.Content{everyContent}}
	deepEqual(t, "success", *ResultFromProto(ResultToProto(ok)), ok)
	e := &errs.Error{Code: "ERR_X", Message: "m", Details: map[string]any{"field": "f"}, Status: 409}
	failed := seam.Result{Output: json.RawMessage(`{"ignored":1}`), Err: e, Status: 409}
	deepEqual(t, "failure", *ResultFromProto(ResultToProto(failed)), seam.Result{Err: e, Status: 409})
	state := everyState
	task := seam.Result{Task: &state, Status: 202}
	deepEqual(t, "task", *ResultFromProto(ResultToProto(task)), task)
	ev := ResultEventToProto(ok).GetResult()
	deepEqual(t, "result event", *ResultFromProto(ev), ok)
}

func TestCallEventsRoundTrip(t *testing.T) {
	p := seam.Progress{Progress: 1, Total: 3, Message: "one"}
	deepEqual(t, "progress", ProgressFromProto(ProgressEventToProto(p).GetProgress()), p)
	l := seam.LogLine{Level: "info", Logger: "core", Data: json.RawMessage(`"x"`)}
	deepEqual(t, "log line", LogLineFromProto(LogEventToProto(l).GetLog()), l)
}

func TestDescribeRoundTrip(t *testing.T) {
	d := seam.Description{Name: "core", Version: "1.0.0", Description: "d", ProtocolVersion: 1, Subscriptions: []string{"task.*"}, SDKVersion: "0.9"}
	tools := []seam.Tool{
		{
			Name: "t", Title: "T", Description: "does", Toolset: "ts", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{}`),
			HonoursIdempotency: true, TaskSupport: "optional",
			Annotations: &seam.Annotations{ReadOnly: true, Destructive: true, Idempotent: true, OpenWorld: true, Title: "T"},
		},
		{Name: "bare", Annotations: &seam.Annotations{}},
	}
	gotD, gotTools := DescribeFromProto(DescribeToProto(d, tools))
	deepEqual(t, "description", gotD, d)
	deepEqual(t, "tools", gotTools, tools)
	// Every annotation is sent, false ones too: an old host reads an unset
	// hint as its MCP default, not as false.
	a := ToolToProto(tools[1]).GetAnnotations()
	if a.ReadOnly == nil || a.Destructive == nil || a.Idempotent == nil || a.OpenWorld == nil {
		t.Fatalf("annotations left unset: %v", a)
	}
	if ToolToProto(seam.Tool{Name: "x"}).GetAnnotations() != nil {
		t.Fatal("a tool without annotations was sent some")
	}
}

func TestPromptsRoundTrip(t *testing.T) {
	prompts := []seam.Prompt{{Name: "p", Title: "P", Description: "d", Arguments: []seam.PromptArgument{{Name: "a", Description: "ad", Required: true}}}}
	deepEqual(t, "prompts", PromptsFromProto(PromptsToProto(prompts)), prompts)
	name, args := GetPromptFromProto(GetPromptToProto("p", map[string]string{"a": "1"}))
	deepEqual(t, "get prompt", []any{name, args}, []any{"p", map[string]string{"a": "1"}})
	c := everyContent
	r := seam.PromptResult{Description: "d", Messages: []seam.PromptMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Content: &c}}}
	deepEqual(t, "rendered", PromptResultFromProto(PromptResultToProto(r)), r)
	e := &errs.Error{Code: "ERR_NOT_FOUND", Message: "m", Details: map[string]any{}, Status: 404}
	deepEqual(t, "refused", PromptResultFromProto(PromptResultToProto(seam.PromptResult{Description: "lost", Err: e})), seam.PromptResult{Err: e})
}

func TestCompletionRoundTrip(t *testing.T) {
	req := seam.CompleteRequest{RefType: "prompt", RefName: "p", Argument: "a", Value: "v", Context: map[string]string{"b": "2"}}
	deepEqual(t, "request", CompleteRequestFromProto(CompleteRequestToProto(req)), req)
	c := seam.Completion{Values: []string{"x"}, Total: 150, HasMore: true}
	deepEqual(t, "completion", CompletionFromProto(CompletionToProto(c)), c)
}

func TestResourcesRoundTrip(t *testing.T) {
	r := seam.Resources{
		Resources: []seam.Resource{{URI: "u", Name: "n", Description: "d", MIMEType: "text/plain"}},
		Templates: []seam.ResourceTemplate{{URITemplate: "u/{id}", Name: "n", Description: "d", MIMEType: "text/plain"}},
	}
	deepEqual(t, "listing", ResourcesFromProto(ResourcesToProto(r)), r)
	deepEqual(t, "read request", ReadRequestFromProto(ReadRequestToProto("sdd://x")), "sdd://x")
	read := seam.ReadResult{Contents: []seam.ResourceContents{{URI: "u", MIMEType: "m", Text: "t"}, {URI: "b", Blob: []byte{0}}}}
	deepEqual(t, "read", ReadResultFromProto(ReadResultToProto(read)), read)
	e := &errs.Error{Code: "ERR_RESOURCE_NOT_FOUND", Message: "m", Details: map[string]any{"field": "uri"}, Status: 404}
	deepEqual(t, "refused", ReadResultFromProto(ReadResultToProto(seam.ReadResult{Err: e})), seam.ReadResult{Err: e})
}

func TestHealthRoundTrip(t *testing.T) {
	h := seam.Health{Status: "degraded", Message: "m", Details: json.RawMessage(`{"db":{}}`)}
	deepEqual(t, "health", HealthFromProto(HealthToProto(h)), h)
}

func TestAskRoundTrip(t *testing.T) {
	a := seam.Ask{Channel: 9, Method: "sampling/createMessage", Params: json.RawMessage(`{"maxTokens":1}`)}
	deepEqual(t, "ask", AskFromProto(AskToProto(a)), a)
	res, fail := AnswerFromProto(AnswerToProto(json.RawMessage(`{"role":"assistant"}`), nil))
	deepEqual(t, "answer", []any{res, fail}, []any{json.RawMessage(`{"role":"assistant"}`), (*errs.Error)(nil)})
	e := &errs.Error{Code: "ERR_CLIENT_UNSUPPORTED", Message: "m", Details: map[string]any{}, Status: 501}
	res, fail = AnswerFromProto(AnswerToProto(nil, e))
	deepEqual(t, "refusal", []any{res, fail}, []any{json.RawMessage(nil), e})
}

func TestEventsRoundTrip(t *testing.T) {
	ev := seam.Event{ID: "e-1", Type: "task.created", Source: "core", Time: "2026-01-02T03:04:05.000Z", Data: json.RawMessage(`{"id":1}`)}
	got, ok := HandleEventFromProto(HandleEventToProto(ev))
	deepEqual(t, "handled event", []any{got, ok}, []any{ev, true})
	if _, ok := HandleEventFromProto(&pb.HandleEventRequest{}); ok {
		t.Fatal("a request without an event read as one")
	}
	deepEqual(t, "published event", PublishFromProto(PublishToProto(ev)), ev)
	ack := seam.PublishAck{Seq: 3, Error: "store down", Retry: true}
	deepEqual(t, "ack", PublishAckFromProto(PublishAckToProto(ack)), ack)
	if PublishedToProto("e-1").GetId() != "e-1" {
		t.Fatal("the published event's id was lost")
	}
	batch := EventOutcomesToProto([]*errs.Error{nil, {Code: "ERR_X", Message: "m", Status: 500}})
	if len(batch.GetOutcomes()) != 2 || batch.GetOutcomes()[0].GetError() != nil || batch.GetOutcomes()[1].GetError().GetCode() != "ERR_X" {
		t.Fatalf("event outcomes: %v", batch)
	}
	if BatchRefusedToProto(&errs.Error{Code: "ERR_LIMIT_EXCEEDED", Status: 413}).GetError().GetStatus() != 413 {
		t.Fatal("a refused batch lost its error")
	}
}

func TestTaskRoundTrip(t *testing.T) {
	deepEqual(t, "state", *TaskStateFromProto(TaskStateToProto(everyState)), everyState)
	req := seam.TaskRequest{Op: "list", TaskID: "t-1", Cursor: "c", Caller: everyCaller}
	deepEqual(t, "request", TaskRequestFromProto(TaskRequestToProto(req)), req)
	state := everyState
	resp := seam.TaskResponse{
		Task: &state, Tasks: []seam.TaskState{everyState}, NextCursor: "n",
		Result: &seam.Result{Output: json.RawMessage(`{}`), Status: 200},
	}
	deepEqual(t, "response", TaskResponseFromProto(TaskResponseToProto(resp)), resp)
	e := &errs.Error{Code: "ERR_NOT_FOUND", Message: "m", Details: map[string]any{}, Status: 404}
	deepEqual(t, "refusal", TaskResponseFromProto(TaskResponseToProto(seam.TaskResponse{Err: e})), seam.TaskResponse{Err: e})
}

func TestConfigureRoundTrip(t *testing.T) {
	c := seam.Config{Root: "/w", DataDir: "/d", Mode: "TEST", HostVersion: "1.0", Settings: map[string]string{"k": "v"}}
	got, id := ConfigureFromProto(ConfigureToProto(c, 7))
	deepEqual(t, "configure", []any{got, id}, []any{c, uint32(7)})
	done := seam.Configured{CallLane: "/tmp/s", LaneEventBatches: true}
	deepEqual(t, "configured", ConfiguredFromProto(ConfiguredToProto(done)), done)
}
