package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/plugin"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/session"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// syncTools publishes the visible tools to the MCP server. SetTools sends
// notifications/tools/list_changed to every session.
func (h *Host) syncTools() {
	visible := h.servable()
	tools := make([]server.ServerTool, 0, len(visible))
	for _, t := range visible {
		tools = append(tools, server.ServerTool{Tool: mcpTool(t), Handler: h.toolHandler(t.Name)})
	}
	h.mcp.SetTools(tools...)
}

func mcpTool(t *registry.Tool) mcp.Tool {
	h := t.Hints()
	var exec *mcp.ToolExecution
	if t.TaskSupport != "" {
		// Listed for clients; the host answers task calls itself
		// (host/tasks.go) before mcp-go would run them in memory.
		exec = &mcp.ToolExecution{TaskSupport: mcp.TaskSupport(t.TaskSupport)}
	}
	return mcp.Tool{
		Execution:       exec,
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.Description,
		RawInputSchema:  t.InputSchema,
		RawOutputSchema: t.OutputSchema,
		// The title is the tool's own: annotations.title, its 2025-03-26
		// form, would only repeat it (docs/decisions.md D37).
		Annotations: mcp.ToolAnnotation{
			ReadOnlyHint:    h.ReadOnly,
			DestructiveHint: h.Destructive,
			IdempotentHint:  h.Idempotent,
			OpenWorldHint:   h.OpenWorld,
		},
	}
}

// toolHandler adapts an MCP call to the pipeline, in a span of its own
// when the process exports traces (call_trace.go).
func (h *Host) toolHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if telemetry.On() {
			return toResult(h.tracedCall(ctx, name, req, nil)), nil
		}
		return toResult(h.runCall(ctx, name, req, nil)), nil
	}
}

// runCall runs an MCP call of tool name through the pipeline; task, when
// set, asks for it as a task (docs/decisions.md D39). The call carries the
// trace context it came with (D38).
func (h *Host) runCall(ctx context.Context, name string, req mcp.CallToolRequest, task *pipeline.TaskParams) *pipeline.Outcome {
	tool, _ := h.reg.Get(name)
	call := &pipeline.Call{Name: name, Tool: tool, Task: task}
	call.TraceParent, call.TraceState = callTraceContext(ctx, req)
	if lifted, ok := liftedArguments(ctx); ok {
		call.Args = lifted
	} else {
		switch raw := req.GetRawArguments().(type) {
		case json.RawMessage:
			call.Args = raw
		case nil:
		default:
			b, err := json.Marshal(raw)
			if err != nil {
				return pipeline.Fail(errs.Invalid("", "json", "arguments cannot be encoded as JSON"))
			}
			call.Args = b
		}
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		call.Caller.SessionID = sess.SessionID()
		if ci, ok := sess.(server.SessionWithClientInfo); ok {
			info := ci.GetClientInfo()
			call.Caller.ClientName, call.Caller.ClientVersion = info.Name, info.Version
		}
	}
	if call.Caller.ClientName == "" && req.Params.Meta != nil {
		// Stateless clients (protocol 2026-07-28) name themselves on
		// every request instead of at initialize.
		if ci, ok := req.Params.Meta.AdditionalFields[mcp.MetaKeyClientInfo].(map[string]any); ok {
			call.Caller.ClientName, _ = ci["name"].(string)
			call.Caller.ClientVersion, _ = ci["version"].(string)
		}
	}
	sess := h.sessionOf(ctx)
	if sess.AgentID != "" {
		call.Caller.ID, call.Caller.Source = sess.AgentID, "env"
	}
	call.Caller.Project = h.projects.Active(ctx, sess)
	if sess.Mode == config.ModeReadOnly {
		// A tool that writes only on some inputs (next actions with
		// claim) asks the caller's scopes; a READONLY session has read.
		call.Caller.Scopes = []string{"read"}
	}
	if p, ok := httpserve.PrincipalOf(ctx); ok && p.UserID != "" {
		call.Caller.ID, call.Caller.Source, call.Caller.Scopes = p.UserID, "api_key", p.Scopes
	}
	named, e := h.idempotencyOf(ctx, req, call)
	if e != nil {
		return pipeline.Fail(e)
	}
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		token := req.Params.Meta.ProgressToken
		call.Progress = func(progress, total float64, message string) {
			params := map[string]any{"progressToken": token, "progress": progress}
			if total > 0 {
				params["total"] = total
			}
			if message != "" {
				params["message"] = message
			}
			session.MarkNotified(ctx)
			if err := h.mcp.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
				h.log.Debug("progress notification not sent", "tool", name, "error", err)
			}
		}
	}
	if level := session.WantedLogLevel(ctx); level != "" {
		call.LogLevel = string(level)
		call.Log = func(level, logger string, data json.RawMessage) {
			session.SendCallLog(ctx, h.mcp, h.log, level, logger, data)
		}
	}
	session.RequestLog(ctx, h.mcp, h.log, mcp.LoggingLevelDebug, "calling %s as %s", name, callerName(call.Caller))
	start := time.Now()
	out := h.pipe.Run(ctx, call)
	namedConflict(out.Err, named)
	if out.Err == nil {
		h.projects.Note(ctx, sess, call.Args)
	}
	if out.Err != nil {
		session.RequestLog(ctx, h.mcp, h.log, mcp.LoggingLevelWarning, "%s failed after %s: %s: %s", name, time.Since(start).Round(time.Millisecond), out.Err.Code, out.Err.Message)
	} else {
		session.RequestLog(ctx, h.mcp, h.log, mcp.LoggingLevelInfo, "%s answered %d after %s", name, out.Status, time.Since(start).Round(time.Millisecond))
	}
	return out
}

// callerName is who a call acts as, for the request's log lines.
func callerName(c pipeline.Caller) string {
	switch {
	case c.ID != "":
		return c.ID
	case c.ClientName != "":
		return c.ClientName
	default:
		return "unknown"
	}
}

// toResult renders an outcome as docs/decisions.md D3 fixes it.
func toResult(out *pipeline.Outcome) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"status": out.Status}}
	if out.Err != nil {
		details := out.Err.Details
		if details == nil {
			details = map[string]any{}
		}
		env := map[string]any{"error": map[string]any{"code": out.Err.Code, "message": out.Err.Message, "details": details}}
		raw, err := sdk.MarshalJSON(env)
		if err != nil {
			raw = []byte(`{"error":{"code":"ERR_INTERNAL","message":"error details could not be encoded","details":{}}}`)
		}
		res.IsError = true
		res.RawStructuredContent = raw
		res.Content = []mcp.Content{mcp.NewTextContent(string(raw))}
		return res
	}
	raw := out.Output
	if !isJSONObject(raw) {
		// structuredContent must be an object; wrap anything else.
		wrapped, err := sdk.MarshalJSON(map[string]json.RawMessage{"result": raw})
		if err == nil {
			raw = wrapped
		}
	}
	res.RawStructuredContent = raw
	res.Content = []mcp.Content{mcp.NewTextContent(string(raw))}
	for _, c := range out.Content {
		res.Content = append(res.Content, mcpContent(c))
	}
	return res
}

func isJSONObject(raw json.RawMessage) bool {
	s := strings.TrimLeft(string(raw), " \t\r\n")
	return strings.HasPrefix(s, "{")
}

// dispatch is the pipeline's last stage: the host's own tools run here,
// everything else goes to its plugin.
func (h *Host) dispatch(ctx context.Context, c *pipeline.Call) *pipeline.Outcome {
	if c.Tool.Owner == registry.HostOwner {
		return h.callSystemTool(ctx, c)
	}
	h.mu.Lock()
	p := h.plugins[c.Tool.Owner]
	h.mu.Unlock()
	if p == nil {
		return pipeline.Fail(errs.Newf(503, errs.PluginUnavailable, "plugin %s is not running", c.Tool.Owner))
	}
	if c.Replay && !c.Tool.ReadOnly && !c.Tool.HonoursIdempotency {
		// The call may have run before the daemon died; running it again
		// could apply it twice, and the tool cannot tell.
		// The caller is not told to retry: it might apply the call twice
		// (docs/decisions.md D32).
		e := errs.Newf(503, errs.Unavailable, "the cairn daemon restarted while %s was running; it may or may not have taken effect, and the tool cannot tell a replay apart: check its effect before calling it again", c.Name)
		e.Details["applied"] = "unknown"
		e.Details["retryable"] = false
		return pipeline.Fail(e)
	}
	channel, closeChannel := h.asks.open(ctx, c.Tool.Owner)
	defer closeChannel()
	retrySafe := c.Tool.ReadOnly || c.Tool.Idempotent || (c.Tool.HonoursIdempotency && c.IdempotencyKey != "")
	out := p.Call(ctx, c, supervisor.CallOptions{ClientChannel: channel, RetrySafe: retrySafe})
	if out.Err != nil || out.Task != nil {
		return out // a task's output is checked when tasks/result fetches it
	}
	checked, e := checkOutput(c.Name, out.Output)
	if e != nil {
		return pipeline.Fail(e)
	}
	out.Output = checked
	return out
}

// resourcePlugin is what the host needs of a plugin to serve its resources.
type resourcePlugin interface {
	Name() string
	ListResources(context.Context) (plugin.Resources, error)
	ReadResource(context.Context, string) (plugin.ReadResult, error)
}

// adoptResources registers a plugin's resources, templates and prompts with
// the MCP server, routing reads back to the plugin.
func (h *Host) adoptResources(ctx context.Context, p interface {
	resourcePlugin
	promptPlugin
}) {
	h.adoptPrompts(ctx, p)
	resp, err := p.ListResources(ctx)
	if err != nil {
		h.log.Warn("plugin did not list its resources", "plugin", p.Name(), "error", err)
		return
	}
	read := func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		r, err := p.ReadResource(ctx, req.Params.URI)
		if err != nil {
			return nil, err
		}
		if r.Err != nil {
			if r.Err.Status == 404 {
				return nil, fmt.Errorf("%w: %s: %s", server.ErrResourceNotFound, r.Err.Code, r.Err.Message)
			}
			return nil, fmt.Errorf("%s: %s", r.Err.Code, r.Err.Message)
		}
		out := make([]mcp.ResourceContents, 0, len(r.Contents))
		for _, c := range r.Contents {
			if c.Blob != nil {
				out = append(out, mcp.BlobResourceContents{URI: c.URI, MIMEType: c.MIMEType, Blob: base64.StdEncoding.EncodeToString(c.Blob)})
			} else {
				out = append(out, mcp.TextResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text})
			}
		}
		return out, nil
	}
	var resources []server.ServerResource
	var templates []server.ServerResourceTemplate
	for _, r := range resp.Resources {
		res := mcp.NewResource(r.URI, r.Name, mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType))
		resources = append(resources, server.ServerResource{Resource: res, Handler: read})
	}
	for _, t := range resp.Templates {
		tpl, err := newTemplate(t)
		if err != nil {
			h.log.Warn("plugin resource template refused", "plugin", p.Name(), "template", t.URITemplate, "error", err)
			continue
		}
		templates = append(templates, server.ServerResourceTemplate{Template: tpl, Handler: read})
	}
	key := resourceKey(resp)
	h.mu.Lock()
	if old, ok := h.resKeys[p.Name()]; ok && old == key {
		h.mu.Unlock()
		return
	}
	h.resKeys[p.Name()] = key
	h.resources[p.Name()] = resources
	h.templates[p.Name()] = templates
	h.mu.Unlock()
	h.syncResources()
}

// resourceKey fingerprints a plugin's resource listing.
func resourceKey(resp plugin.Resources) string {
	var b strings.Builder
	for _, r := range resp.Resources {
		fmt.Fprintf(&b, "r\x00%s\x00%s\x00%s\x00%s\n", r.URI, r.Name, r.Description, r.MIMEType)
	}
	for _, t := range resp.Templates {
		fmt.Fprintf(&b, "t\x00%s\x00%s\x00%s\x00%s\n", t.URITemplate, t.Name, t.Description, t.MIMEType)
	}
	return b.String()
}

// refreshResources asks every running plugin for its resources again.
func (h *Host) refreshResources(ctx context.Context) {
	for _, p := range h.Plugins() {
		if p.Status().State == supervisor.StateRunning {
			h.adoptResources(ctx, p)
		}
	}
}

func newTemplate(t plugin.ResourceTemplate) (tpl mcp.ResourceTemplate, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid URI template: %v", r)
		}
	}()
	return mcp.NewResourceTemplate(t.URITemplate, t.Name,
		mcp.WithTemplateDescription(t.Description), mcp.WithTemplateMIMEType(t.MIMEType)), nil
}

func (h *Host) dropResources(plugin string) {
	h.dropPrompts(plugin)
	h.mu.Lock()
	_, had := h.resources[plugin]
	delete(h.resKeys, plugin)
	delete(h.resources, plugin)
	delete(h.templates, plugin)
	h.mu.Unlock()
	if had {
		h.syncResources()
	}
}

// syncResources publishes every plugin's resources and templates.
func (h *Host) syncResources() {
	h.mu.Lock()
	var res []server.ServerResource
	var tpl []server.ServerResourceTemplate
	for _, r := range h.resources {
		res = append(res, r...)
	}
	for _, t := range h.templates {
		tpl = append(tpl, t...)
	}
	h.mu.Unlock()
	h.mcp.SetResources(res...)
	h.mcp.SetResourceTemplates(tpl...)
}
