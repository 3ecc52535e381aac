package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// syncTools publishes the visible tools to the MCP server. SetTools sends
// notifications/tools/list_changed to every session.
func (srv *Server) syncTools() {
	visible := srv.catalog.Servable()
	tools := make([]server.ServerTool, 0, len(visible))
	for _, t := range visible {
		tools = append(tools, server.ServerTool{Tool: mcpTool(t), Handler: srv.toolHandler(t.Name)})
	}
	srv.mcp.SetTools(tools...)
}

func mcpTool(t *registry.Tool) mcp.Tool {
	hints := t.Hints()
	var exec *mcp.ToolExecution
	if t.TaskSupport != "" {
		// Listed for clients; the host answers task calls itself
		// (mcp_tasks.go) before mcp-go would run them in memory.
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
			ReadOnlyHint:    hints.ReadOnly,
			DestructiveHint: hints.Destructive,
			IdempotentHint:  hints.Idempotent,
			OpenWorldHint:   hints.OpenWorld,
		},
	}
}

// toolHandler adapts an MCP call to the pipeline, in a span of its own
// when the process exports traces (call_trace.go).
func (srv *Server) toolHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var turn approvalTurn
		var out *seam.Result
		if telemetry.On() {
			out = srv.tracedCall(ctx, name, req, nil, &turn)
		} else {
			out = srv.runCall(ctx, name, req, nil, &turn)
		}
		if turn.input != nil {
			return turn.input, nil // a person is asked (approval_bridge.go)
		}
		return toResult(out), nil
	}
}

// runCall runs an MCP call of tool name through the pipeline; task, when
// set, asks for it as a task (docs/decisions.md D39). The call carries the
// trace context it came with (D38). turn, when set, lets the approval
// bridge ask a person about the call (D45); a task's call is not asked.
func (srv *Server) runCall(ctx context.Context, name string, req mcp.CallToolRequest, task *seam.TaskParams, turn *approvalTurn) *seam.Result {
	tool, _ := srv.catalog.Get(name)
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
		call.Caller.ClientSessionID = sess.SessionID()
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
	sess := srv.catalog.SessionOf(ctx)
	if sess.AgentID != "" {
		call.Caller.ID, call.Caller.Source = sess.AgentID, "env"
	}
	call.Caller.Project = srv.projects.Active(ctx, sess)
	if sess.Mode == config.ModeReadOnly {
		// A tool that writes only on some inputs (next actions with
		// claim) asks the caller's scopes; a READONLY session has read.
		call.Caller.Scopes = []string{"read"}
	}
	if p, ok := httpserve.PrincipalOf(ctx); ok && p.UserID != "" {
		call.Caller.ID, call.Caller.Source, call.Caller.Scopes = p.UserID, principalSource(p), p.Scopes
	}
	named, e := srv.idempotencyOf(ctx, req, call)
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
			clientsession.MarkNotified(ctx)
			if err := srv.mcp.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
				srv.log.Debug("progress notification not sent", "tool", name, "error", err)
			}
		}
	}
	if level := clientsession.WantedLogLevel(ctx); level != "" {
		call.LogLevel = string(level)
		call.Log = func(level, logger string, data json.RawMessage) {
			clientsession.SendCallLog(ctx, srv.mcp, srv.log, level, logger, data)
		}
	}
	clientsession.RequestLog(ctx, srv.mcp, srv.log, mcp.LoggingLevelDebug, "calling %s as %s", name, callerName(call.Caller))
	start := time.Now()
	var out *seam.Result
	if turn != nil {
		out = srv.approvals.runCall(ctx, req, call, turn)
	} else {
		out = srv.pipe.Run(ctx, call)
	}
	namedConflict(out.Err, named)
	if out.Err == nil {
		srv.projects.Note(ctx, sess, call.Args)
	}
	if out.Err != nil {
		clientsession.RequestLog(ctx, srv.mcp, srv.log, mcp.LoggingLevelWarning, "%s failed after %s: %s: %s", name, time.Since(start).Round(time.Millisecond), out.Err.Code, out.Err.Message)
	} else {
		clientsession.RequestLog(ctx, srv.mcp, srv.log, mcp.LoggingLevelInfo, "%s answered %d after %s", name, out.Status, time.Since(start).Round(time.Millisecond))
	}
	return out
}

// callerName is who a call acts as, for the request's log lines.
func callerName(c seam.Caller) string {
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
func toResult(out *seam.Result) *mcp.CallToolResult {
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
