package seam_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// The host fills a Caller per session; a plugin asks it what the caller
// may do.
func ExampleCaller() {
	operator := seam.Caller{ID: "ada", Source: "env", ClientSessionID: "s-1", Project: "apollo"}
	reader := seam.Caller{ID: "bob", Source: "api_key", Scopes: []string{"read"}}
	fmt.Println(operator.ID, operator.Project, operator.HasScope("admin"))
	fmt.Println(reader.ID, reader.HasScope("read"), reader.HasScope("write"))
	// Output:
	// ada apollo true
	// bob true false
}

// Operator tells the local operator (stdio, the CLI) from an API key's
// user.
func ExampleCaller_Operator() {
	fmt.Println(seam.Caller{Source: "client"}.Operator(), seam.Caller{Source: "api_key"}.Operator())
	// Output: true false
}

// A READONLY session narrows even the operator to "read".
func ExampleCaller_HasScope() {
	readonly := seam.Caller{Source: "env", Scopes: []string{"read"}}
	fmt.Println(seam.Caller{Source: "env"}.HasScope("write"), readonly.HasScope("write"))
	// Output: true false
}

// A Call is what the host asks a plugin to run: the tool, its arguments
// and everything about how the client wants it run.
func ExampleCall() {
	call := seam.Call{
		Tool:           "task_create",
		Args:           json.RawMessage(`{"title":"write docs"}`),
		Caller:         seam.Caller{ID: "ada", Source: "env"},
		RequestID:      "r-17",
		IdempotencyKey: "create-1", IdempotencyClient: true,
		WantsProgress: true,
		LogLevel:      "info",
		TraceParent:   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	}
	fmt.Println(call.Tool, string(call.Args), call.Caller.ID, call.Task == nil)
	// Output: task_create {"title":"write docs"} ada true
}

// A call the client wants run as a task carries TaskParams.
func ExampleTaskParams() {
	call := seam.Call{Tool: "index_rebuild", Args: json.RawMessage(`{}`), Task: &seam.TaskParams{TTL: time.Hour}}
	fmt.Println(call.Task.TTL)
	// Output: 1h0m0s
}

// describe is how the host reads a Result: the error, the task the call
// started, or the output.
func describe(r seam.Result) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("%d %s", r.Status, r.Err.Code)
	case r.Task != nil:
		return "task " + r.Task.ID + " " + r.Task.Status
	}
	return fmt.Sprintf("%d %s", r.Status, r.Output)
}

func ExampleResult() {
	fmt.Println(describe(seam.Result{Status: 200, Output: json.RawMessage(`{"id":"t-1"}`)}))
	fmt.Println(describe(seam.Result{Status: 404, Err: errs.NotFoundf(errs.TaskNotFound, "id", "no task t-9")}))
	fmt.Println(describe(seam.Result{Task: &seam.TaskState{ID: "k-1", Status: "working"}}))
	// Output:
	// 200 {"id":"t-1"}
	// 404 ERR_TASK_NOT_FOUND
	// task k-1 working
}

// Content blocks ride beside a result's structured output.
func ExampleContent() {
	r := seam.Result{Status: 200, Output: json.RawMessage(`{}`), Content: []seam.Content{
		{Type: "text", Text: "3 tasks are overdue"},
		{Type: "resource_link", URI: "cairn://tasks/overdue", MIMEType: "application/json"},
	}}
	for _, c := range r.Content {
		fmt.Println(c.Type, c.Text+c.URI)
	}
	// Output:
	// text 3 tasks are overdue
	// resource_link cairn://tasks/overdue
}

// A TaskState is a task-augmented call as its plugin keeps it.
func ExampleTaskState() {
	t := seam.TaskState{
		ID: "k-1", Tool: "index_rebuild", Status: "working", StatusMessage: "42 of 100 files",
		CreatedAt: "2025-01-31T10:00:00Z", UpdatedAt: "2025-01-31T10:00:05Z",
		TTL: time.Hour, PollInterval: 2 * time.Second,
	}
	fmt.Println(t.Tool, t.Status, t.StatusMessage, t.PollInterval)
	// Output: index_rebuild working 42 of 100 files 2s
}

// Progress reports reach the client while the call runs.
func ExampleProgress() {
	onProgress := func(p seam.Progress) { fmt.Printf("%.0f/%.0f %s\n", p.Progress, p.Total, p.Message) }
	onProgress(seam.Progress{Progress: 3, Total: 10, Message: "indexing"})
	// Output: 3/10 indexing
}

// A LogLine is a running call's log message for its client.
func ExampleLogLine() {
	l := seam.LogLine{Level: "warning", Logger: "notes", Data: json.RawMessage(`{"msg":"slow disk"}`)}
	fmt.Println(l.Level, l.Logger, string(l.Data))
	// Output: warning notes {"msg":"slow disk"}
}

// An Ask goes from a running call to its client over the call's channel.
func ExampleAsk() {
	call := seam.Call{Tool: "note_summarize", ClientChannel: 7}
	ask := seam.Ask{
		Channel: call.ClientChannel,
		Method:  "sampling/createMessage",
		Params:  json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"Summarize"}}],"maxTokens":200}`),
	}
	fmt.Println(ask.Channel, ask.Method)
	// Output: 7 sampling/createMessage
}

// A ToolCallback runs another area's tool for a running call, over the
// call's tool channel: the host acts as the call's caller.
func ExampleToolCallback() {
	call := seam.Call{Tool: "sdd_plan", ToolChannel: 3, IdempotencyKey: "sess:9"}
	cb := seam.ToolCallback{
		Channel:        call.ToolChannel,
		Tool:           "task_create",
		Args:           json.RawMessage(`{"title":"Write docs"}`),
		IdempotencyKey: "/task/1",
	}
	fmt.Println(cb.Channel, cb.Tool, cb.IdempotencyKey)
	// Output: 3 task_create /task/1
}

// A CompleteRequest asks for the values of a prompt's argument that begin
// with what the user typed; the Completion lists them.
func ExampleCompleteRequest() {
	req := seam.CompleteRequest{RefType: "prompt", RefName: "plan_phase", Argument: "phase", Value: "de",
		Context: map[string]string{"project": "apollo"}}
	fmt.Println(req.RefType, req.RefName, req.Argument, req.Value, req.Context["project"])
	// Output: prompt plan_phase phase de apollo
}

func ExampleCompletion() {
	c := seam.Completion{Values: []string{"design", "deploy"}, Total: 5, HasMore: true}
	fmt.Println(c.Values, c.Total, c.HasMore)
	// Output: [design deploy] 5 true
}

// A plugin describes itself and its tools when it starts.
func ExampleDescription() {
	d := seam.Description{Name: "notes", Version: "1.2.0", Description: "Keeps notes",
		ProtocolVersion: 1, Subscriptions: []string{"task.*"}, SDKVersion: "cairn-sdk/1"}
	fmt.Println(d.Name, d.Version, d.Subscriptions)
	// Output: notes 1.2.0 [task.*]
}

// A Tool as the plugin declares it; the host fills an empty schema.
func ExampleTool() {
	t := seam.Tool{
		Name: "note_add", Title: "Add a note", Description: "Adds a note.", Toolset: "notes",
		InputSchema:        json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		HonoursIdempotency: true,
		Annotations:        &seam.Annotations{Idempotent: true},
	}
	fmt.Println(t.Name, t.Toolset, t.HonoursIdempotency, len(t.OutputSchema) == 0)
	// Output: note_add notes true true
}

// Annotations are the hints a client shows before it runs a tool.
func ExampleAnnotations() {
	a := seam.Annotations{Destructive: true, Title: "Delete a note"}
	fmt.Println(a.Title, a.Destructive, a.ReadOnly)
	// Output: Delete a note true false
}

// An Event crosses the seam both ways: published by a plugin, delivered
// to those whose patterns match its type.
func ExampleEvent() {
	ev := seam.Event{ID: "e-1", Type: "task.created", Source: "tasks", Time: "2025-01-31T10:00:00Z",
		Data: json.RawMessage(`{"id":"t-1"}`)}
	for _, pattern := range []string{"task.*", "note.*"} {
		fmt.Println(pattern, seam.MatchEventType(pattern, ev.Type))
	}
	// Output:
	// task.* true
	// note.* false
}

// A plugin still opening reports HealthOpening; the host holds its calls
// until it reports anything else.
func ExampleHealth() {
	for _, h := range []seam.Health{
		{Status: seam.HealthOpening, Message: "building the index"},
		{Status: "ok", Details: json.RawMessage(`{"notes":12}`)},
	} {
		fmt.Println(h.Status, h.Status == seam.HealthOpening)
	}
	// Output:
	// opening true
	// ok false
}

// Prompts are listed with their arguments, then rendered on request.
func ExamplePrompt() {
	p := seam.Prompt{Name: "plan_phase", Title: "Plan a phase", Description: "Plans one phase of a project.",
		Arguments: []seam.PromptArgument{{Name: "phase", Description: "The phase to plan", Required: true}}}
	fmt.Println(p.Name, p.Arguments[0].Name, p.Arguments[0].Required)
	// Output: plan_phase phase true
}

func ExamplePromptArgument() {
	args := []seam.PromptArgument{{Name: "phase", Required: true}, {Name: "depth"}}
	var required []string
	for _, a := range args {
		if a.Required {
			required = append(required, a.Name)
		}
	}
	fmt.Println(required)
	// Output: [phase]
}

// A rendered prompt: its messages, or the plugin's refusal.
func ExamplePromptResult() {
	ok := seam.PromptResult{Description: "Plan the design phase", Messages: []seam.PromptMessage{
		{Role: "user", Text: "Plan the design phase of apollo."},
	}}
	refused := seam.PromptResult{Err: errs.Invalid("phase", "required", "name the phase to plan")}
	fmt.Println(len(ok.Messages), ok.Err == nil, refused.Err.Status)
	// Output: 1 true 400
}

// A message is text, or a content block when Content is set.
func ExamplePromptMessage() {
	for _, m := range []seam.PromptMessage{
		{Role: "user", Text: "Review this note."},
		{Role: "user", Content: &seam.Content{Type: "resource", URI: "cairn://notes/1", MIMEType: "text/plain", Text: "buy milk"}},
	} {
		if m.Content != nil {
			fmt.Println(m.Role, m.Content.Type, m.Content.URI)
		} else {
			fmt.Println(m.Role, m.Text)
		}
	}
	// Output:
	// user Review this note.
	// user resource cairn://notes/1
}

// A plugin's resources: fixed ones, and templates a client fills in.
func ExampleResources() {
	rs := seam.Resources{
		Resources: []seam.Resource{{URI: "cairn://notes/index", Name: "index", MIMEType: "application/json"}},
		Templates: []seam.ResourceTemplate{{URITemplate: "cairn://notes/{id}", Name: "note", MIMEType: "text/plain"}},
	}
	fmt.Println(rs.Resources[0].URI, rs.Templates[0].URITemplate)
	// Output: cairn://notes/index cairn://notes/{id}
}

func ExampleResource() {
	r := seam.Resource{URI: "cairn://notes/index", Name: "index", Description: "Every note's title", MIMEType: "application/json"}
	fmt.Println(r.Name, r.MIMEType)
	// Output: index application/json
}

func ExampleResourceTemplate() {
	t := seam.ResourceTemplate{URITemplate: "cairn://notes/{id}", Name: "note", Description: "One note", MIMEType: "text/plain"}
	fmt.Println(t.Name, t.URITemplate)
	// Output: note cairn://notes/{id}
}

// A read resource is text or, for a binary one, a blob.
func ExampleResourceContents() {
	for _, c := range []seam.ResourceContents{
		{URI: "cairn://notes/1", MIMEType: "text/plain", Text: "buy milk"},
		{URI: "cairn://notes/1/photo", MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}},
	} {
		if c.Blob != nil {
			fmt.Println(c.URI, len(c.Blob), "bytes")
		} else {
			fmt.Println(c.URI, c.Text)
		}
	}
	// Output:
	// cairn://notes/1 buy milk
	// cairn://notes/1/photo 4 bytes
}

func ExampleReadResult() {
	missing := seam.ReadResult{Err: errs.NotFoundf(errs.ResourceNotFound, "uri", "no note 9")}
	fmt.Println(missing.Err.Status, missing.Err.Code)
	// Output: 404 ERR_RESOURCE_NOT_FOUND
}

// The host asks a plugin about its tasks on a caller's behalf.
func ExampleTaskRequest() {
	req := seam.TaskRequest{Op: "get", TaskID: "k-1", Caller: seam.Caller{ID: "ada", Source: "env"}}
	fmt.Println(req.Op, req.TaskID, req.Caller.ID)
	// Output: get k-1 ada
}

// The answer holds the task, a page of tasks, an ended task's result, or
// the refusal.
func ExampleTaskResponse() {
	done := seam.TaskResponse{
		Task:   &seam.TaskState{ID: "k-1", Status: "completed"},
		Result: &seam.Result{Status: 200, Output: json.RawMessage(`{"files":100}`)},
	}
	unknown := seam.TaskResponse{Err: errs.NotFoundf(errs.NotFound, "taskId", "no task k-2")}
	fmt.Println(done.Task.Status, string(done.Result.Output), unknown.Err.Status)
	// Output: completed {"files":100} 404
}
