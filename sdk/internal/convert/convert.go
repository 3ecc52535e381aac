// Package convert is the one converter between the seam's friendly types
// (sdk/seam) and the plugin protocol's generated ones (pluginv1): a call,
// its caller and result (typed errors, content blocks and tasks
// included), progress and log lines, a described tool, prompts,
// completions, resources, health, events, task operations and a
// plugin's requests to ask a client (docs/decisions.md D34).
//
// Functions named …ToProto build a protocol message; …FromProto read one,
// accepting nil (a message the peer left unset) as the empty value.
package convert

import (
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// CallToProto is the request that runs call c on its plugin.
func CallToProto(c seam.Call) *pb.CallToolRequest {
	req := &pb.CallToolRequest{
		Tool: c.Tool, Arguments: c.Args, Caller: CallerToProto(c.Caller), RequestId: c.RequestID,
		WantsProgress: c.WantsProgress, IdempotencyKey: c.IdempotencyKey, IdempotencyClient: c.IdempotencyClient, Replay: c.Replay,
		ClientChannel: c.ClientChannel, Traceparent: c.TraceParent, Tracestate: c.TraceState, LogLevel: c.LogLevel,
	}
	if c.Task != nil {
		req.Task = &pb.TaskParams{TtlMs: c.Task.TTL.Milliseconds()}
	}
	return req
}

// CallerToProto is the caller as the protocol carries it.
func CallerToProto(c seam.Caller) *pb.Caller {
	return &pb.Caller{
		Id: c.ID, Source: c.Source, SessionId: c.ClientSessionID, ClientName: c.ClientName,
		ClientVersion: c.ClientVersion, Scopes: c.Scopes, Project: c.Project,
	}
}

// ResultFromProto is a plugin's result: its typed error (status 500 when
// the plugin set none), its task, or its output (`{}` when empty), status
// (200 when unset) and content blocks. The output is not checked here:
// the host checks it before it goes to a client.
func ResultFromProto(res *pb.ToolResult) *seam.Result {
	if e := res.GetError(); e != nil {
		return failed(ErrorFromProto(e))
	}
	if t := res.GetTask(); t != nil {
		return &seam.Result{Task: TaskStateFromProto(t), Status: int(res.GetStatus())}
	}
	out := &seam.Result{Output: res.GetOutput(), Status: int(res.GetStatus())}
	if out.Status == 0 {
		out.Status = 200
	}
	if len(out.Output) == 0 {
		out.Output = json.RawMessage(`{}`)
	}
	for _, c := range res.GetContent() {
		out.Content = append(out.Content, ContentFromProto(c))
	}
	return out
}

// failed is the result of a typed error (status 500 when it names none).
func failed(e *errs.Error) *seam.Result {
	if e.Status == 0 {
		e.Status = 500
	}
	return &seam.Result{Err: e, Status: e.Status}
}

// ErrorFromProto is a protocol error as a typed error (details an empty
// map when the plugin sent none, or none that decode as an object); nil
// for nil.
func ErrorFromProto(e *pb.ToolError) *errs.Error {
	if e == nil {
		return nil
	}
	details := map[string]any{}
	if len(e.Details) > 0 {
		_ = json.Unmarshal(e.Details, &details)
		if details == nil {
			details = map[string]any{} // the plugin sent JSON null
		}
	}
	return &errs.Error{Code: e.Code, Message: e.Message, Details: details, Status: int(e.Status)}
}

// ErrorToProto is a typed error as the protocol carries it (details a JSON
// object, never null); nil for nil.
func ErrorToProto(e *errs.Error) *pb.ToolError {
	if e == nil {
		return nil
	}
	return lane.ErrorToProto(e)
}

// ContentFromProto is a content block (of a result or a prompt message).
func ContentFromProto(c *pb.Content) seam.Content {
	return seam.Content{Type: c.GetType(), Text: c.GetText(), MIMEType: c.GetMimeType(), Data: c.GetData(), URI: c.GetUri()}
}

// ProgressFromProto is one progress report of a running call.
func ProgressFromProto(p *pb.Progress) seam.Progress {
	return seam.Progress{Progress: p.GetProgress(), Total: p.GetTotal(), Message: p.GetMessage()}
}

// LogLineFromProto is one log line of a running call for its client.
func LogLineFromProto(m *pb.LogMessage) seam.LogLine {
	return seam.LogLine{Level: m.GetLevel(), Logger: m.GetLogger(), Data: m.GetData()}
}

// ToolFromProto is a described tool as the plugin sent it.
func ToolFromProto(t *pb.Tool) seam.Tool {
	out := seam.Tool{
		Name: t.GetName(), Title: t.GetTitle(), Description: t.GetDescription(), Toolset: t.GetToolset(),
		InputSchema: t.GetInputSchema(), OutputSchema: t.GetOutputSchema(),
		HonoursIdempotency: t.GetHonoursIdempotency(), TaskSupport: t.GetTaskSupport(),
	}
	if a := t.GetAnnotations(); a != nil {
		out.Annotations = &seam.Annotations{
			ReadOnly: a.GetReadOnly(), Destructive: a.GetDestructive(), Idempotent: a.GetIdempotent(),
			OpenWorld: a.GetOpenWorld(), Title: a.GetTitle(),
		}
	}
	return out
}

// DescriptionFromProto is a plugin's description, less its tools.
func DescriptionFromProto(d *pb.DescribeResponse) seam.Description {
	return seam.Description{
		Name: d.GetName(), Version: d.GetVersion(), Description: d.GetDescription(),
		ProtocolVersion: int(d.GetProtocolVersion()), Subscriptions: d.GetSubscriptions(), SDKVersion: d.GetSdkVersion(),
	}
}

// PromptsFromProto is a plugin's prompt listing.
func PromptsFromProto(r *pb.ListPromptsResponse) []seam.Prompt {
	out := make([]seam.Prompt, 0, len(r.GetPrompts()))
	for _, p := range r.GetPrompts() {
		pr := seam.Prompt{Name: p.GetName(), Title: p.GetTitle(), Description: p.GetDescription()}
		for _, a := range p.GetArguments() {
			pr.Arguments = append(pr.Arguments, seam.PromptArgument{Name: a.GetName(), Description: a.GetDescription(), Required: a.GetRequired()})
		}
		out = append(out, pr)
	}
	return out
}

// PromptResultFromProto is a rendered prompt, or the plugin's error.
func PromptResultFromProto(r *pb.GetPromptResponse) seam.PromptResult {
	if e := r.GetError(); e != nil {
		return seam.PromptResult{Err: ErrorFromProto(e)}
	}
	out := seam.PromptResult{Description: r.GetDescription()}
	for _, m := range r.GetMessages() {
		msg := seam.PromptMessage{Role: m.GetRole(), Text: m.GetText()}
		if m.GetContent() != nil {
			c := ContentFromProto(m.GetContent())
			msg.Content = &c
		}
		out.Messages = append(out.Messages, msg)
	}
	return out
}

// CompleteRequestToProto is a completion request as the protocol carries it.
func CompleteRequestToProto(r seam.CompleteRequest) *pb.CompleteRequest {
	return &pb.CompleteRequest{RefType: r.RefType, RefName: r.RefName, Argument: r.Argument, Value: r.Value, Context: r.Context}
}

// CompletionFromProto is a plugin's completion; Values is never nil.
func CompletionFromProto(r *pb.CompleteResponse) seam.Completion {
	out := seam.Completion{Values: r.GetValues(), Total: int(r.GetTotal()), HasMore: r.GetHasMore()}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}

// ResourcesFromProto is a plugin's resource listing.
func ResourcesFromProto(r *pb.ListResourcesResponse) seam.Resources {
	var out seam.Resources
	for _, x := range r.GetResources() {
		out.Resources = append(out.Resources, seam.Resource{URI: x.GetUri(), Name: x.GetName(), Description: x.GetDescription(), MIMEType: x.GetMimeType()})
	}
	for _, t := range r.GetTemplates() {
		out.Templates = append(out.Templates, seam.ResourceTemplate{URITemplate: t.GetUriTemplate(), Name: t.GetName(), Description: t.GetDescription(), MIMEType: t.GetMimeType()})
	}
	return out
}

// ReadResultFromProto is a read resource, or the plugin's error.
func ReadResultFromProto(r *pb.ReadResourceResponse) seam.ReadResult {
	if e := r.GetError(); e != nil {
		return seam.ReadResult{Err: ErrorFromProto(e)}
	}
	var out seam.ReadResult
	for _, c := range r.GetContents() {
		out.Contents = append(out.Contents, seam.ResourceContents{URI: c.GetUri(), MIMEType: c.GetMimeType(), Text: c.GetText(), Blob: c.GetBlob()})
	}
	return out
}

// HealthFromProto is a plugin's health report.
func HealthFromProto(r *pb.HealthResponse) seam.Health {
	return seam.Health{Status: r.GetStatus(), Message: r.GetMessage(), Details: r.GetDetails()}
}

// AskFromProto is a plugin's request to ask a client.
func AskFromProto(r *pb.AskClientRequest) seam.Ask {
	return seam.Ask{Channel: r.GetClientChannel(), Method: r.GetMethod(), Params: r.GetParams()}
}

// AnswerToProto is the answer to a plugin's request to ask a client: the
// client's result, or the typed error that kept it from answering.
func AnswerToProto(result json.RawMessage, fail *errs.Error) *pb.AskClientResponse {
	if fail != nil {
		return &pb.AskClientResponse{Error: ErrorToProto(fail)}
	}
	return &pb.AskClientResponse{Result: result}
}

// EventToProto is a bus event as the protocol carries it.
func EventToProto(ev seam.Event) *pb.Event {
	return &pb.Event{Id: ev.ID, Type: ev.Type, Source: ev.Source, Time: ev.Time, Data: ev.Data}
}

// EventFromProto is an event a plugin published.
func EventFromProto(ev *pb.Event) seam.Event {
	return seam.Event{ID: ev.GetId(), Type: ev.GetType(), Source: ev.GetSource(), Time: ev.GetTime(), Data: ev.GetData()}
}

// TaskStateFromProto is a plugin's task state; nil for nil.
func TaskStateFromProto(t *pb.TaskState) *seam.TaskState {
	if t == nil {
		return nil
	}
	return &seam.TaskState{
		ID: t.GetTaskId(), Tool: t.GetTool(), Status: t.GetStatus(), StatusMessage: t.GetStatusMessage(),
		CreatedAt: t.GetCreatedAt(), UpdatedAt: t.GetLastUpdatedAt(),
		TTL: time.Duration(t.GetTtlMs()) * time.Millisecond, PollInterval: time.Duration(t.GetPollIntervalMs()) * time.Millisecond,
		Interrupted: t.GetInterrupted(),
	}
}

// TaskRequestToProto is a task operation as the protocol carries it.
func TaskRequestToProto(r seam.TaskRequest) *pb.TaskRequest {
	return &pb.TaskRequest{Op: r.Op, TaskId: r.TaskID, Cursor: r.Cursor, Caller: CallerToProto(r.Caller)}
}

// TaskResponseFromProto is a plugin's answer to a task operation.
func TaskResponseFromProto(r *pb.TaskResponse) seam.TaskResponse {
	out := seam.TaskResponse{Task: TaskStateFromProto(r.GetTask()), NextCursor: r.GetNextCursor(), Err: ErrorFromProto(r.GetError())}
	for _, t := range r.GetTasks() {
		out.Tasks = append(out.Tasks, *TaskStateFromProto(t))
	}
	if res := r.GetResult(); res != nil {
		out.Result = ResultFromProto(res)
	}
	return out
}
