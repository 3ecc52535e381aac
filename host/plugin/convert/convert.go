// Package convert is the one converter between the host's own types and the
// plugin protocol's generated ones (sdk/protocol/pluginv1): a call
// (pipeline.Call), its caller, its outcome (pipeline.Outcome, typed errors
// and content blocks included), progress and log lines, a described tool
// (registry.Tool), prompts, completions, resources, health and a plugin's
// requests to ask a client (host/plugin). Besides this package only
// host/supervisor, the plugin boundary, imports pluginv1
// (docs/decisions.md D34); the host's other packages use the friendly types.
//
// Functions named …ToProto build a protocol message; …FromProto read one,
// accepting nil (a message the peer left unset) as the empty value.
package convert

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/plugin"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/protocol/lane"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/schema"
)

// CallToProto is the request that runs call c on its plugin. channel is the
// client channel the plugin may ask the caller's client through (0: none).
// The request wants progress when c forwards it, and log lines at
// c.LogLevel when c forwards those.
func CallToProto(c *pipeline.Call, channel uint64) *pb.CallToolRequest {
	req := &pb.CallToolRequest{
		Tool: c.Name, Arguments: c.Args, Caller: callerToProto(c.Caller), RequestId: c.RequestID,
		WantsProgress: c.Progress != nil, IdempotencyKey: c.IdempotencyKey, IdempotencyClient: c.IdempotencyClient, Replay: c.Replay,
		ClientChannel: channel, Traceparent: c.TraceParent, Tracestate: c.TraceState,
	}
	if c.Task != nil {
		req.Task = &pb.TaskParams{TtlMs: c.Task.TTL.Milliseconds()}
	}
	if c.Log != nil {
		req.LogLevel = c.LogLevel
	}
	return req
}

// callerToProto is the caller as the protocol carries it.
func callerToProto(c pipeline.Caller) *pb.Caller {
	return &pb.Caller{
		Id: c.ID, Source: c.Source, SessionId: c.SessionID, ClientName: c.ClientName,
		ClientVersion: c.ClientVersion, Scopes: c.Scopes, Project: c.Project,
	}
}

// OutcomeFromProto is a plugin's result as the pipeline's outcome: its typed
// error (status 500 when the plugin set none), or its output (`{}` when
// empty), status (200 when unset) and content blocks. The output is not
// checked here: the host checks it before it goes to a client.
func OutcomeFromProto(res *pb.ToolResult) *pipeline.Outcome {
	if e := res.GetError(); e != nil {
		return pipeline.Fail(errorFromProto(e))
	}
	if t := res.GetTask(); t != nil {
		return &pipeline.Outcome{Task: taskStateFromProto(t), Status: int(res.GetStatus())}
	}
	out := &pipeline.Outcome{Output: res.GetOutput(), Status: int(res.GetStatus())}
	if out.Status == 0 {
		out.Status = 200
	}
	if len(out.Output) == 0 {
		out.Output = json.RawMessage(`{}`)
	}
	for _, c := range res.GetContent() {
		out.Content = append(out.Content, contentFromProto(c))
	}
	return out
}

// errorFromProto is a protocol error as a typed error (details an empty
// map when the plugin sent none, or none that decode as an object); nil
// for nil.
func errorFromProto(e *pb.ToolError) *errs.Error {
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

// errorToProto is a typed error as the protocol carries it (details a JSON
// object, never null); nil for nil.
func errorToProto(e *errs.Error) *pb.ToolError {
	if e == nil {
		return nil
	}
	return lane.ErrorToProto(e)
}

// contentFromProto is a content block (of a result or a prompt message).
func contentFromProto(c *pb.Content) pipeline.Content {
	return pipeline.Content{Type: c.GetType(), Text: c.GetText(), MIMEType: c.GetMimeType(), Data: c.GetData(), URI: c.GetUri()}
}

// ProgressFunc adapts the call's progress callback to the protocol's
// progress events; nil when the call forwards no progress.
func ProgressFunc(c *pipeline.Call) func(*pb.Progress) {
	if c.Progress == nil {
		return nil
	}
	return func(p *pb.Progress) { c.Progress(p.GetProgress(), p.GetTotal(), p.GetMessage()) }
}

// LogFunc adapts the call's log callback to the protocol's log events; nil
// when the call forwards no log lines.
func LogFunc(c *pipeline.Call) func(*pb.LogMessage) {
	if c.Log == nil {
		return nil
	}
	return func(m *pb.LogMessage) { c.Log(m.GetLevel(), m.GetLogger(), m.GetData()) }
}

// ToolFromProto is a described tool as the registry's. With compile, its
// input schema is compiled now (else on the tool's first call,
// registry.Tool.Validate) and its output schema checked. A tool without an
// input schema takes any object; one without a toolset is in "default".
func ToolFromProto(t *pb.Tool, compile bool) (*registry.Tool, error) {
	in := json.RawMessage(t.GetInputSchema())
	if len(in) == 0 {
		in = json.RawMessage(`{"type":"object"}`)
	}
	var validator *schema.Validator
	if compile {
		var err error
		if validator, err = schema.Compile(in); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		if len(t.GetOutputSchema()) > 0 {
			if _, err := schema.Compile(t.GetOutputSchema()); err != nil {
				return nil, fmt.Errorf("output schema: %w", err)
			}
		}
	}
	out, err := schema.Published(t.GetOutputSchema())
	if err != nil {
		return nil, err
	}
	rt := &registry.Tool{
		Name: t.GetName(), Title: t.GetTitle(), Description: t.GetDescription(), Toolset: t.GetToolset(),
		InputSchema: in, OutputSchema: out, SuccessSchema: json.RawMessage(t.GetOutputSchema()),
		HonoursIdempotency: t.GetHonoursIdempotency(), TaskSupport: t.GetTaskSupport(), Validator: validator,
	}
	if a := t.GetAnnotations(); a != nil {
		rt.ReadOnly = a.GetReadOnly()
		rt.Destructive = a.GetDestructive()
		rt.Idempotent = a.GetIdempotent()
		rt.OpenWorld = a.GetOpenWorld()
		if rt.Title == "" {
			rt.Title = a.GetTitle()
		}
	}
	if rt.Toolset == "" {
		rt.Toolset = "default"
	}
	return rt, nil
}

// DescriptionFromProto is a plugin's description, less its tools.
func DescriptionFromProto(d *pb.DescribeResponse) plugin.Description {
	return plugin.Description{
		Name: d.GetName(), Version: d.GetVersion(), Description: d.GetDescription(),
		ProtocolVersion: int(d.GetProtocolVersion()), Subscriptions: d.GetSubscriptions(), SDKVersion: d.GetSdkVersion(),
	}
}

// PromptsFromProto is a plugin's prompt listing.
func PromptsFromProto(r *pb.ListPromptsResponse) []plugin.Prompt {
	out := make([]plugin.Prompt, 0, len(r.GetPrompts()))
	for _, p := range r.GetPrompts() {
		pr := plugin.Prompt{Name: p.GetName(), Title: p.GetTitle(), Description: p.GetDescription()}
		for _, a := range p.GetArguments() {
			pr.Arguments = append(pr.Arguments, plugin.PromptArgument{Name: a.GetName(), Description: a.GetDescription(), Required: a.GetRequired()})
		}
		out = append(out, pr)
	}
	return out
}

// PromptResultFromProto is a rendered prompt, or the plugin's error.
func PromptResultFromProto(r *pb.GetPromptResponse) plugin.PromptResult {
	if e := r.GetError(); e != nil {
		return plugin.PromptResult{Err: errorFromProto(e)}
	}
	out := plugin.PromptResult{Description: r.GetDescription()}
	for _, m := range r.GetMessages() {
		msg := plugin.PromptMessage{Role: m.GetRole(), Text: m.GetText()}
		if m.GetContent() != nil {
			c := contentFromProto(m.GetContent())
			msg.Content = &c
		}
		out.Messages = append(out.Messages, msg)
	}
	return out
}

// CompleteRequestToProto is a completion request as the protocol carries it.
func CompleteRequestToProto(r plugin.CompleteRequest) *pb.CompleteRequest {
	return &pb.CompleteRequest{RefType: r.RefType, RefName: r.RefName, Argument: r.Argument, Value: r.Value, Context: r.Context}
}

// CompletionFromProto is a plugin's completion; Values is never nil.
func CompletionFromProto(r *pb.CompleteResponse) plugin.Completion {
	out := plugin.Completion{Values: r.GetValues(), Total: int(r.GetTotal()), HasMore: r.GetHasMore()}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}

// ResourcesFromProto is a plugin's resource listing.
func ResourcesFromProto(r *pb.ListResourcesResponse) plugin.Resources {
	var out plugin.Resources
	for _, x := range r.GetResources() {
		out.Resources = append(out.Resources, plugin.Resource{URI: x.GetUri(), Name: x.GetName(), Description: x.GetDescription(), MIMEType: x.GetMimeType()})
	}
	for _, t := range r.GetTemplates() {
		out.Templates = append(out.Templates, plugin.ResourceTemplate{URITemplate: t.GetUriTemplate(), Name: t.GetName(), Description: t.GetDescription(), MIMEType: t.GetMimeType()})
	}
	return out
}

// ReadResultFromProto is a read resource, or the plugin's error.
func ReadResultFromProto(r *pb.ReadResourceResponse) plugin.ReadResult {
	if e := r.GetError(); e != nil {
		return plugin.ReadResult{Err: errorFromProto(e)}
	}
	var out plugin.ReadResult
	for _, c := range r.GetContents() {
		out.Contents = append(out.Contents, plugin.ResourceContents{URI: c.GetUri(), MIMEType: c.GetMimeType(), Text: c.GetText(), Blob: c.GetBlob()})
	}
	return out
}

// HealthFromProto is a plugin's health report.
func HealthFromProto(r *pb.HealthResponse) plugin.Health {
	return plugin.Health{Status: r.GetStatus(), Message: r.GetMessage(), Details: r.GetDetails()}
}

// AskFromProto is a plugin's request to ask a client.
func AskFromProto(r *pb.AskClientRequest) plugin.Ask {
	return plugin.Ask{Channel: r.GetClientChannel(), Method: r.GetMethod(), Params: r.GetParams()}
}

// AnswerToProto is the answer to a plugin's request to ask a client: the
// client's result, or the typed error that kept it from answering.
func AnswerToProto(result json.RawMessage, fail *errs.Error) *pb.AskClientResponse {
	if fail != nil {
		return &pb.AskClientResponse{Error: errorToProto(fail)}
	}
	return &pb.AskClientResponse{Result: result}
}
