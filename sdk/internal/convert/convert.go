// Package convert is the one converter between the seam's friendly types
// (sdk/seam) and the plugin protocol's generated ones (pluginv1): a call,
// its caller and result (typed errors, content blocks and tasks
// included), progress and log lines, a described tool, prompts,
// completions, resources, health, events, task operations and a
// plugin's requests to ask a client (docs/decisions.md D34). Both ends
// use it: the host's connection (sdk/hostconn) and the SDK's server, each
// type in one function per direction, and no other package builds a
// protocol message (TestOnlyConvertBuildsProtocolMessages).
//
// Functions named …ToProto build a protocol message; …FromProto read one,
// accepting nil (a message the peer left unset) as the empty value.
package convert

import (
	"encoding/json"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// CallToProto is the request that runs call c on its plugin.
func CallToProto(c seam.Call) *pb.CallToolRequest {
	req := &pb.CallToolRequest{
		Tool: c.Tool, Arguments: c.Args, Caller: CallerToProto(c.Caller), RequestId: c.RequestID,
		WantsProgress: c.WantsProgress, IdempotencyKey: c.IdempotencyKey, IdempotencyClient: c.IdempotencyClient, Replay: c.Replay,
		ClientChannel: c.ClientChannel, ToolChannel: c.ToolChannel, Traceparent: c.TraceParent, Tracestate: c.TraceState, LogLevel: c.LogLevel,
	}
	if c.Task != nil {
		req.Task = &pb.TaskParams{TtlMs: c.Task.TTL.Milliseconds()}
	}
	return req
}

// CallFromProto is the call a request asks the plugin to run.
func CallFromProto(req *pb.CallToolRequest) seam.Call {
	c := seam.Call{
		Tool: req.GetTool(), Args: req.GetArguments(), Caller: CallerFromProto(req.GetCaller()), RequestID: req.GetRequestId(),
		WantsProgress: req.GetWantsProgress(), IdempotencyKey: req.GetIdempotencyKey(), IdempotencyClient: req.GetIdempotencyClient(), Replay: req.GetReplay(),
		ClientChannel: req.GetClientChannel(), ToolChannel: req.GetToolChannel(), TraceParent: req.GetTraceparent(), TraceState: req.GetTracestate(), LogLevel: req.GetLogLevel(),
	}
	if t := req.GetTask(); t != nil {
		c.Task = &seam.TaskParams{TTL: time.Duration(t.GetTtlMs()) * time.Millisecond}
	}
	return c
}

// CallerToProto is the caller as the protocol carries it.
func CallerToProto(c seam.Caller) *pb.Caller {
	return &pb.Caller{
		Id: c.ID, Source: c.Source, SessionId: c.ClientSessionID, ClientName: c.ClientName,
		ClientVersion: c.ClientVersion, Scopes: c.Scopes, Project: c.Project,
	}
}

// CallerFromProto is the caller a request names; a request that names
// none is from the unknown caller.
func CallerFromProto(c *pb.Caller) seam.Caller {
	if c == nil {
		return seam.Caller{ID: "unknown", Source: "unknown"}
	}
	return seam.Caller{
		ID: c.GetId(), Source: c.GetSource(), ClientSessionID: c.GetSessionId(), ClientName: c.GetClientName(),
		ClientVersion: c.GetClientVersion(), Scopes: c.GetScopes(), Project: c.GetProject(),
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

// ResultToProto is a call's outcome as the protocol carries it: its typed
// error (and no output), or its output, or the task it started; its
// status and content blocks either way.
func ResultToProto(r seam.Result) *pb.ToolResult {
	out := &pb.ToolResult{Output: r.Output, Status: int32(r.Status)}
	if r.Err != nil {
		out.Error = ErrorToProto(r.Err)
		out.Output = nil
	}
	for _, c := range r.Content {
		out.Content = append(out.Content, ContentToProto(c))
	}
	if r.Task != nil {
		out.Task = TaskStateToProto(*r.Task)
	}
	return out
}

// ResultEventToProto is a call's outcome as the last event of its
// CallTool stream.
func ResultEventToProto(r seam.Result) *pb.CallToolEvent {
	return &pb.CallToolEvent{Event: &pb.CallToolEvent_Result{Result: ResultToProto(r)}}
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
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	raw, err := json.Marshal(details)
	if err != nil {
		raw = []byte(`{}`)
	}
	return &pb.ToolError{Code: e.Code, Message: e.Message, Details: raw, Status: int32(e.Status)}
}

// ContentFromProto is a content block (of a result or a prompt message).
func ContentFromProto(c *pb.Content) seam.Content {
	return seam.Content{Type: c.GetType(), Text: c.GetText(), MIMEType: c.GetMimeType(), Data: c.GetData(), URI: c.GetUri()}
}

// ContentToProto is a content block as the protocol carries it.
func ContentToProto(c seam.Content) *pb.Content {
	return &pb.Content{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MIMEType, Uri: c.URI}
}

// ProgressFromProto is one progress report of a running call.
func ProgressFromProto(p *pb.Progress) seam.Progress {
	return seam.Progress{Progress: p.GetProgress(), Total: p.GetTotal(), Message: p.GetMessage()}
}

// ProgressEventToProto is one progress report of a running call as an
// event of its stream.
func ProgressEventToProto(p seam.Progress) *pb.CallToolEvent {
	return &pb.CallToolEvent{Event: &pb.CallToolEvent_Progress{Progress: &pb.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message}}}
}

// LogLineFromProto is one log line of a running call for its client.
func LogLineFromProto(m *pb.LogMessage) seam.LogLine {
	return seam.LogLine{Level: m.GetLevel(), Logger: m.GetLogger(), Data: m.GetData()}
}

// LogEventToProto is one log line of a running call as an event of its
// stream.
func LogEventToProto(l seam.LogLine) *pb.CallToolEvent {
	return &pb.CallToolEvent{Event: &pb.CallToolEvent_Log{Log: &pb.LogMessage{Level: l.Level, Logger: l.Logger, Data: l.Data}}}
}

// ToolFromProto is a described tool as the plugin sent it.
func ToolFromProto(t *pb.Tool) seam.Tool {
	out := seam.Tool{
		Name: t.GetName(), Title: t.GetTitle(), Description: t.GetDescription(), Toolset: t.GetToolset(),
		InputSchema: t.GetInputSchema(), OutputSchema: t.GetOutputSchema(),
		HonoursIdempotency: t.GetHonoursIdempotency(), TaskSupport: t.GetTaskSupport(), CallsTools: t.GetCallsTools(),
	}
	if a := t.GetAnnotations(); a != nil {
		out.Annotations = &seam.Annotations{
			ReadOnly: a.GetReadOnly(), Destructive: a.GetDestructive(), Idempotent: a.GetIdempotent(),
			OpenWorld: a.GetOpenWorld(), Title: a.GetTitle(),
		}
	}
	return out
}

// ToolToProto is a described tool as the protocol carries it.
func ToolToProto(t seam.Tool) *pb.Tool {
	out := &pb.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, Toolset: t.Toolset,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		HonoursIdempotency: t.HonoursIdempotency, TaskSupport: t.TaskSupport, CallsTools: t.CallsTools,
	}
	if a := t.Annotations; a != nil {
		readOnly, destructive, idempotent, openWorld := a.ReadOnly, a.Destructive, a.Idempotent, a.OpenWorld
		out.Annotations = &pb.Annotations{
			ReadOnly: &readOnly, Destructive: &destructive, Idempotent: &idempotent, OpenWorld: &openWorld, Title: a.Title,
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

// DescribeFromProto is a plugin's description and its tools.
func DescribeFromProto(d *pb.DescribeResponse) (seam.Description, []seam.Tool) {
	tools := make([]seam.Tool, 0, len(d.GetTools()))
	for _, t := range d.GetTools() {
		tools = append(tools, ToolFromProto(t))
	}
	return DescriptionFromProto(d), tools
}

// DescribeToProto is a plugin's description and its tools as the
// protocol carries them.
func DescribeToProto(d seam.Description, tools []seam.Tool) *pb.DescribeResponse {
	out := &pb.DescribeResponse{
		Name: d.Name, Version: d.Version, Description: d.Description,
		ProtocolVersion: uint32(d.ProtocolVersion), Subscriptions: d.Subscriptions, SdkVersion: d.SDKVersion,
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, ToolToProto(t))
	}
	return out
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

// PromptsToProto is a plugin's prompt listing as the protocol carries it.
func PromptsToProto(prompts []seam.Prompt) *pb.ListPromptsResponse {
	out := &pb.ListPromptsResponse{}
	for _, p := range prompts {
		m := &pb.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			m.Arguments = append(m.Arguments, &pb.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out.Prompts = append(out.Prompts, m)
	}
	return out
}

// GetPromptToProto asks for prompt name rendered with args.
func GetPromptToProto(name string, args map[string]string) *pb.GetPromptRequest {
	return &pb.GetPromptRequest{Name: name, Arguments: args}
}

// GetPromptFromProto is the prompt a request asks for and its arguments.
func GetPromptFromProto(r *pb.GetPromptRequest) (name string, args map[string]string) {
	return r.GetName(), r.GetArguments()
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

// PromptResultToProto is a rendered prompt, or the plugin's error, as the
// protocol carries it.
func PromptResultToProto(r seam.PromptResult) *pb.GetPromptResponse {
	if r.Err != nil {
		return &pb.GetPromptResponse{Error: ErrorToProto(r.Err)}
	}
	out := &pb.GetPromptResponse{Description: r.Description}
	for _, m := range r.Messages {
		pm := &pb.PromptMessage{Role: m.Role, Text: m.Text}
		if m.Content != nil {
			pm.Content = ContentToProto(*m.Content)
		}
		out.Messages = append(out.Messages, pm)
	}
	return out
}

// CompleteRequestToProto is a completion request as the protocol carries it.
func CompleteRequestToProto(r seam.CompleteRequest) *pb.CompleteRequest {
	return &pb.CompleteRequest{RefType: r.RefType, RefName: r.RefName, Argument: r.Argument, Value: r.Value, Context: r.Context}
}

// CompleteRequestFromProto is the completion a request asks for.
func CompleteRequestFromProto(r *pb.CompleteRequest) seam.CompleteRequest {
	return seam.CompleteRequest{RefType: r.GetRefType(), RefName: r.GetRefName(), Argument: r.GetArgument(), Value: r.GetValue(), Context: r.GetContext()}
}

// CompletionFromProto is a plugin's completion; Values is never nil.
func CompletionFromProto(r *pb.CompleteResponse) seam.Completion {
	out := seam.Completion{Values: r.GetValues(), Total: int(r.GetTotal()), HasMore: r.GetHasMore()}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}

// CompletionToProto is a plugin's completion as the protocol carries it.
func CompletionToProto(c seam.Completion) *pb.CompleteResponse {
	return &pb.CompleteResponse{Values: c.Values, Total: int32(c.Total), HasMore: c.HasMore}
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

// ResourcesToProto is a plugin's resource listing as the protocol
// carries it.
func ResourcesToProto(r seam.Resources) *pb.ListResourcesResponse {
	out := &pb.ListResourcesResponse{}
	for _, x := range r.Resources {
		out.Resources = append(out.Resources, &pb.Resource{Uri: x.URI, Name: x.Name, Description: x.Description, MimeType: x.MIMEType})
	}
	for _, t := range r.Templates {
		out.Templates = append(out.Templates, &pb.ResourceTemplate{UriTemplate: t.URITemplate, Name: t.Name, Description: t.Description, MimeType: t.MIMEType})
	}
	return out
}

// ReadRequestToProto asks to read the resource at uri.
func ReadRequestToProto(uri string) *pb.ReadResourceRequest {
	return &pb.ReadResourceRequest{Uri: uri}
}

// ReadRequestFromProto is the URI a read request names.
func ReadRequestFromProto(r *pb.ReadResourceRequest) string { return r.GetUri() }

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

// ReadResultToProto is a read resource, or the plugin's error, as the
// protocol carries it.
func ReadResultToProto(r seam.ReadResult) *pb.ReadResourceResponse {
	if r.Err != nil {
		return &pb.ReadResourceResponse{Error: ErrorToProto(r.Err)}
	}
	out := &pb.ReadResourceResponse{}
	for _, c := range r.Contents {
		out.Contents = append(out.Contents, &pb.ResourceContents{Uri: c.URI, MimeType: c.MIMEType, Text: c.Text, Blob: c.Blob})
	}
	return out
}

// HealthFromProto is a plugin's health report.
func HealthFromProto(r *pb.HealthResponse) seam.Health {
	return seam.Health{Status: r.GetStatus(), Message: r.GetMessage(), Details: r.GetDetails()}
}

// HealthToProto is a plugin's health report as the protocol carries it.
func HealthToProto(h seam.Health) *pb.HealthResponse {
	return &pb.HealthResponse{Status: h.Status, Message: h.Message, Details: h.Details}
}

// AskFromProto is a plugin's request to ask a client.
func AskFromProto(r *pb.AskClientRequest) seam.Ask {
	return seam.Ask{Channel: r.GetClientChannel(), Method: r.GetMethod(), Params: r.GetParams()}
}

// AskToProto is a plugin's request to ask a client as the protocol
// carries it.
func AskToProto(a seam.Ask) *pb.AskClientRequest {
	return &pb.AskClientRequest{ClientChannel: a.Channel, Method: a.Method, Params: a.Params}
}

// AnswerToProto is the answer to a plugin's request to ask a client: the
// client's result, or the typed error that kept it from answering.
func AnswerToProto(result json.RawMessage, fail *errs.Error) *pb.AskClientResponse {
	if fail != nil {
		return &pb.AskClientResponse{Error: ErrorToProto(fail)}
	}
	return &pb.AskClientResponse{Result: result}
}

// AnswerFromProto is the host's answer to a plugin's request to ask a
// client: the client's result, or the typed error that kept it from
// answering.
func AnswerFromProto(r *pb.AskClientResponse) (json.RawMessage, *errs.Error) {
	if e := r.GetError(); e != nil {
		return nil, ErrorFromProto(e)
	}
	return r.GetResult(), nil
}

// CallbackFromProto is a plugin's request to run another area's tool.
func CallbackFromProto(r *pb.CallAreaToolRequest) seam.ToolCallback {
	return seam.ToolCallback{Channel: r.GetToolChannel(), Tool: r.GetTool(), Args: r.GetArguments(), IdempotencyKey: r.GetIdempotencyKey()}
}

// CallbackToProto is a plugin's request to run another area's tool as the
// protocol carries it.
func CallbackToProto(c seam.ToolCallback) *pb.CallAreaToolRequest {
	return &pb.CallAreaToolRequest{ToolChannel: c.Channel, Tool: c.Tool, Arguments: c.Args, IdempotencyKey: c.IdempotencyKey}
}

// CallbackResultToProto is the outcome of another area's tool run for a
// plugin: its output, or its typed error.
func CallbackResultToProto(r seam.Result) *pb.CallAreaToolResponse {
	if r.Err != nil {
		return &pb.CallAreaToolResponse{Error: ErrorToProto(r.Err), Status: int32(r.Err.Status)}
	}
	return &pb.CallAreaToolResponse{Output: r.Output, Status: int32(r.Status)}
}

// CallbackResultFromProto is the outcome of another area's tool the host
// ran for the plugin.
func CallbackResultFromProto(r *pb.CallAreaToolResponse) seam.Result {
	if e := r.GetError(); e != nil {
		fail := ErrorFromProto(e)
		return seam.Result{Err: fail, Status: fail.Status}
	}
	return seam.Result{Output: r.GetOutput(), Status: int(r.GetStatus())}
}

// EventToProto is a bus event as the protocol carries it.
func EventToProto(ev seam.Event) *pb.Event {
	return &pb.Event{Id: ev.ID, Type: ev.Type, Source: ev.Source, Time: ev.Time, Data: ev.Data}
}

// EventFromProto is an event a plugin published.
func EventFromProto(ev *pb.Event) seam.Event {
	return seam.Event{ID: ev.GetId(), Type: ev.GetType(), Source: ev.GetSource(), Time: ev.GetTime(), Data: ev.GetData()}
}

// HandleEventToProto asks a plugin to handle bus event ev.
func HandleEventToProto(ev seam.Event) *pb.HandleEventRequest {
	return &pb.HandleEventRequest{Event: EventToProto(ev)}
}

// HandleEventFromProto is the event a request asks the plugin to handle;
// ok is false when the request carries none.
func HandleEventFromProto(r *pb.HandleEventRequest) (ev seam.Event, ok bool) {
	if r.GetEvent() == nil {
		return seam.Event{}, false
	}
	return EventFromProto(r.GetEvent()), true
}

// HandleEventsToProto asks a plugin to handle several bus events, in
// order, in one call-lane frame.
func HandleEventsToProto(evs []*pb.Event) *pb.HandleEventsRequest {
	return &pb.HandleEventsRequest{Events: evs}
}

// EventOutcomesToProto answers a batch of events: one outcome per event,
// in order, its error when its handlers failed (nil: they succeeded).
func EventOutcomesToProto(outcomes []*errs.Error) *pb.HandleEventsResponse {
	out := &pb.HandleEventsResponse{Outcomes: make([]*pb.EventOutcome, len(outcomes))}
	for i, e := range outcomes {
		out.Outcomes[i] = &pb.EventOutcome{Error: ErrorToProto(e)}
	}
	return out
}

// BatchRefusedToProto answers a batch of events the plugin refused as a
// whole: no event in it ran.
func BatchRefusedToProto(e *errs.Error) *pb.HandleEventsResponse {
	return &pb.HandleEventsResponse{Error: ErrorToProto(e)}
}

// PublishToProto asks the host to put ev on its bus.
func PublishToProto(ev seam.Event) *pb.PublishRequest {
	return &pb.PublishRequest{Event: EventToProto(ev)}
}

// PublishFromProto is the event a plugin asks the host to publish.
func PublishFromProto(r *pb.PublishRequest) seam.Event {
	return EventFromProto(r.GetEvent())
}

// PublishedToProto is the host's answer to a Publish: the event's id on
// the bus.
func PublishedToProto(id string) *pb.PublishResponse {
	return &pb.PublishResponse{Id: id}
}

// PublishAckToProto is an ack of a plugin's event stream.
func PublishAckToProto(a seam.PublishAck) *pb.PublishAck {
	return &pb.PublishAck{Seq: a.Seq, Error: a.Error, Retry: a.Retry}
}

// PublishAckFromProto is an ack the host sent on a plugin's event stream.
func PublishAckFromProto(a *pb.PublishAck) seam.PublishAck {
	return seam.PublishAck{Seq: a.GetSeq(), Error: a.GetError(), Retry: a.GetRetry()}
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

// TaskStateToProto is a plugin's task state as the protocol carries it.
func TaskStateToProto(t seam.TaskState) *pb.TaskState {
	return &pb.TaskState{
		TaskId: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.UpdatedAt,
		TtlMs: t.TTL.Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds(), Tool: t.Tool, Interrupted: t.Interrupted,
	}
}

// TaskRequestToProto is a task operation as the protocol carries it.
func TaskRequestToProto(r seam.TaskRequest) *pb.TaskRequest {
	return &pb.TaskRequest{Op: r.Op, TaskId: r.TaskID, Cursor: r.Cursor, Caller: CallerToProto(r.Caller)}
}

// TaskRequestFromProto is the task operation a request asks for.
func TaskRequestFromProto(r *pb.TaskRequest) seam.TaskRequest {
	return seam.TaskRequest{Op: r.GetOp(), TaskID: r.GetTaskId(), Cursor: r.GetCursor(), Caller: CallerFromProto(r.GetCaller())}
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

// TaskResponseToProto is a plugin's answer to a task operation as the
// protocol carries it.
func TaskResponseToProto(r seam.TaskResponse) *pb.TaskResponse {
	out := &pb.TaskResponse{NextCursor: r.NextCursor, Error: ErrorToProto(r.Err)}
	if r.Task != nil {
		out.Task = TaskStateToProto(*r.Task)
	}
	for _, t := range r.Tasks {
		out.Tasks = append(out.Tasks, TaskStateToProto(t))
	}
	if r.Result != nil {
		out.Result = ResultToProto(*r.Result)
	}
	return out
}

// ConfigureToProto hands a plugin its configuration and the broker id of
// the host's services.
func ConfigureToProto(c seam.Config, hostServiceID uint32) *pb.ConfigureRequest {
	return &pb.ConfigureRequest{
		HostServiceId: hostServiceID, Root: c.Root, DataDir: c.DataDir,
		Mode: c.Mode, HostVersion: c.HostVersion, Settings: c.Settings,
	}
}

// ConfigureFromProto is the configuration a plugin is handed, and the
// broker id of the host's services (0: none).
func ConfigureFromProto(r *pb.ConfigureRequest) (seam.Config, uint32) {
	return seam.Config{
		Root: r.GetRoot(), DataDir: r.GetDataDir(), Mode: r.GetMode(),
		HostVersion: r.GetHostVersion(), Settings: r.GetSettings(),
	}, r.GetHostServiceId()
}

// ConfiguredToProto is a plugin's answer to its configuration.
func ConfiguredToProto(c seam.Configured) *pb.ConfigureResponse {
	return &pb.ConfigureResponse{CallLane: c.CallLane, LaneEventBatches: c.LaneEventBatches}
}

// ConfiguredFromProto is a plugin's answer to its configuration.
func ConfiguredFromProto(r *pb.ConfigureResponse) seam.Configured {
	return seam.Configured{CallLane: r.GetCallLane(), LaneEventBatches: r.GetLaneEventBatches()}
}
