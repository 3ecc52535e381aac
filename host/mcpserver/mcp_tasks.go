package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// MCP tasks (docs/decisions.md D39): a long tool call runs as a task its
// plugin keeps, in both protocol eras. 2025-11-25 (the experimental
// "tasks" capability): tools/call with params.task answers CreateTaskResult
// {task}; tasks/get, tasks/result, tasks/list and tasks/cancel. 2026-07-28
// (the io.modelcontextprotocol/tasks extension): a tools/call whose _meta
// declares the extension, to a tool with task support, answers
// resultType "task"; tasks/get inlines the result, tasks/update and
// tasks/cancel acknowledge. The host answers these itself, ahead of
// mcp-go, whose tasks live in memory: a task here lives in its plugin's
// data directory and outlives the connection and the daemon.

// mcpTasksExtension is the 2026-07-28 tasks extension's identifier.
const mcpTasksExtension = "io.modelcontextprotocol/tasks"

// relatedTaskKey is the _meta key tying a tasks/result to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// missingCapability is the 2026-07-28 error for a request that needs a
// capability the client did not declare.
const missingCapability = -32021

// mcpTaskRequest is what the host reads of a tools/call or tasks/* request.
type mcpTaskRequest struct {
	ID     json.RawMessage `json:"id"`
	Params struct {
		Name   string `json:"name"`
		TaskID string `json:"taskId"`
		Cursor string `json:"cursor"`
		Task   *struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
		Meta struct {
			ProtocolVersion    string `json:"io.modelcontextprotocol/protocolVersion"`
			ClientCapabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// stateless reports a 2026-07-28 request: it names its protocol version.
func (r *mcpTaskRequest) stateless() bool { return r.Params.Meta.ProtocolVersion != "" }

func (r *mcpTaskRequest) declaresTasks() bool {
	_, ok := r.Params.Meta.ClientCapabilities.Extensions[mcpTasksExtension]
	return ok
}

// answerMCPTasks answers a task-augmented tools/call and the tasks/* methods;
// ok is false for any other message, which goes on.
func (srv *Server) answerMCPTasks(ctx context.Context, method string, body []byte) (mcp.JSONRPCMessage, bool) {
	switch method {
	case string(mcp.MethodToolsCall):
		// Most calls are plain: only one naming a task, or the tasks
		// extension, is decoded here (its arguments were lifted out of
		// body already, docs/decisions.md D33).
		if !bytes.Contains(body, []byte(`"task"`)) && !bytes.Contains(body, []byte(mcpTasksExtension)) {
			return nil, false
		}
	case string(mcp.MethodTasksGet), string(mcp.MethodTasksResult),
		string(mcp.MethodTasksList), string(mcp.MethodTasksCancel), "tasks/update":
	default:
		return nil, false
	}
	var req mcpTaskRequest
	if err := json.Unmarshal(body, &req); err != nil || len(req.ID) == 0 {
		return nil, false // mcp-go answers what it cannot decode, and notifications
	}
	var rawID any
	_ = json.Unmarshal(req.ID, &rawID)
	id := mcp.NewRequestId(rawID)
	if method == string(mcp.MethodToolsCall) {
		return srv.callAsMCPTask(ctx, id, &req, body)
	}
	if req.stateless() {
		return srv.answerTasksStateless(ctx, id, method, &req), true
	}
	return srv.answerTasks20251125(ctx, id, method, &req), true
}

// callAsMCPTask starts a tools/call as a task when the request asks for one:
// 2025-11-25 with params.task, 2026-07-28 when its _meta declares the
// extension and the tool has task support (the server decides).
func (srv *Server) callAsMCPTask(ctx context.Context, id mcp.RequestId, req *mcpTaskRequest, body []byte) (mcp.JSONRPCMessage, bool) {
	tool, ours := srv.catalog.Get(req.Params.Name)
	if !ours {
		return nil, false
	}
	var ttl time.Duration
	if req.stateless() {
		if !req.declaresTasks() || tool.TaskSupport == "" {
			return nil, false
		}
	} else {
		if req.Params.Task == nil {
			return nil, false
		}
		if tool.TaskSupport == "" {
			return mcp.NewJSONRPCError(id, mcp.METHOD_NOT_FOUND, "tool "+tool.Name+" does not run as a task (its execution.taskSupport is forbidden): call it without params.task", nil), true
		}
		if t := req.Params.Task.TTL; t != nil && *t > 0 {
			ttl = time.Duration(*t) * time.Millisecond
		}
	}
	var call struct {
		Params mcp.CallToolParams `json:"params"`
	}
	if err := json.Unmarshal(body, &call); err != nil {
		return nil, false // mcp-go refuses it in its own words
	}
	callReq, task := mcp.CallToolRequest{Params: call.Params}, &seam.TaskParams{TTL: ttl}
	var out *seam.Result
	if telemetry.On() {
		out = srv.tracedCall(ctx, tool.Name, callReq, task, nil)
	} else {
		out = srv.runCall(ctx, tool.Name, callReq, task, nil)
	}
	if out.Task == nil {
		// Refused before any task was made (its arguments, the session's
		// rights): the answer a plain call gets.
		return mcp.NewJSONRPCResultResponse(id, toResult(out)), true
	}
	if req.stateless() {
		res := taskStateless(out.Task)
		res["resultType"] = "task"
		return mcp.NewJSONRPCResultResponse(id, res), true
	}
	return mcp.NewJSONRPCResultResponse(id, map[string]any{"task": task20251125(out.Task)}), true
}

// answerTasks20251125 answers tasks/get, tasks/result, tasks/list and
// tasks/cancel as the 2025-11-25 revision defines them.
func (srv *Server) answerTasks20251125(ctx context.Context, id mcp.RequestId, method string, req *mcpTaskRequest) mcp.JSONRPCMessage {
	if method == "tasks/update" {
		return mcp.NewJSONRPCError(id, mcp.METHOD_NOT_FOUND, "tasks/update belongs to the 2026-07-28 tasks extension; this session speaks 2025-11-25", nil)
	}
	if method == string(mcp.MethodTasksList) {
		return srv.listMCPTasks(ctx, id, req.Params.Cursor)
	}
	op := map[string]string{string(mcp.MethodTasksGet): "get", string(mcp.MethodTasksResult): "result", string(mcp.MethodTasksCancel): "cancel"}[method]
	resp, e := srv.taskOp(ctx, op, req.Params.TaskID)
	if e != nil {
		return taskError(id, e)
	}
	if op != "result" {
		return mcp.NewJSONRPCResultResponse(id, task20251125(resp.Task))
	}
	res := toResult(srv.checkedTaskResult(resp))
	res.Meta.AdditionalFields[relatedTaskKey] = map[string]any{"taskId": resp.Task.ID}
	return mcp.NewJSONRPCResultResponse(id, res)
}

// answerTasksStateless answers tasks/get, tasks/update and tasks/cancel as
// the 2026-07-28 tasks extension defines them.
func (srv *Server) answerTasksStateless(ctx context.Context, id mcp.RequestId, method string, req *mcpTaskRequest) mcp.JSONRPCMessage {
	switch method {
	case string(mcp.MethodTasksGet), "tasks/update", string(mcp.MethodTasksCancel):
	default:
		return mcp.NewJSONRPCError(id, mcp.METHOD_NOT_FOUND, method+" is not part of the 2026-07-28 tasks extension (tasks/get inlines the result; there is no list)", nil)
	}
	if !req.declaresTasks() {
		return mcp.NewJSONRPCError(id, missingCapability, "Missing required client capability: "+method+" needs the "+mcpTasksExtension+" extension declared in _meta", map[string]any{
			"requiredCapabilities": map[string]any{"extensions": map[string]any{mcpTasksExtension: map[string]any{}}},
		})
	}
	complete := map[string]any{"resultType": "complete"}
	switch method {
	case "tasks/update":
		// No cairn task asks for input, so every response is for a key
		// not outstanding and is ignored; the task must exist.
		if _, e := srv.taskOp(ctx, "get", req.Params.TaskID); e != nil {
			return taskError(id, e)
		}
		return mcp.NewJSONRPCResultResponse(id, complete)
	case string(mcp.MethodTasksCancel):
		// Cancellation is cooperative: a task that already ended is
		// acknowledged too.
		if _, e := srv.taskOp(ctx, "cancel", req.Params.TaskID); e != nil && e.Code != errs.InvalidTransition {
			return taskError(id, e)
		}
		return mcp.NewJSONRPCResultResponse(id, complete)
	}
	resp, e := srv.taskOp(ctx, "get", req.Params.TaskID)
	if e != nil {
		return taskError(id, e)
	}
	if s := resp.Task.Status; s == "completed" || s == "failed" {
		// Ended: its handler has returned, so result does not wait.
		if resp, e = srv.taskOp(ctx, "result", req.Params.TaskID); e != nil {
			return taskError(id, e)
		}
	}
	res := taskStateless(resp.Task)
	res["resultType"] = "complete"
	switch {
	case resp.Task.Interrupted:
		// The one failure that is no tool result: the tool never
		// answered.
		res["status"] = "failed"
		res["error"] = map[string]any{"code": mcp.INTERNAL_ERROR, "message": resp.Task.StatusMessage}
	case resp.Result != nil && resp.Task.Status != "cancelled":
		// A tool error is a result with isError, so the task completed.
		res["status"] = "completed"
		res["result"] = toResult(srv.checkedTaskResult(resp))
	}
	return mcp.NewJSONRPCResultResponse(id, res)
}

// listMCPTasks answers tasks/list: the caller's tasks in every plugin that
// runs some, plugin by plugin (the cursor names the plugin and its own
// cursor).
func (srv *Server) listMCPTasks(ctx context.Context, id mcp.RequestId, cursor string) mcp.JSONRPCMessage {
	names := srv.catalog.MCPTaskPlugins()
	from, inner := 0, ""
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		name, c, found := strings.Cut(string(raw), "\x00")
		from = sort.SearchStrings(names, name)
		if err != nil || !found || from == len(names) || names[from] != name {
			return taskError(id, errs.Invalid("cursor", "known", "the cursor is not one a previous tasks/list returned"))
		}
		inner = c
	}
	tasks := []map[string]any{}
	next := ""
	for i := from; i < len(names) && next == ""; i++ {
		p := srv.mcpTaskPluginNamed(names[i])
		if p == nil {
			continue
		}
		resp, err := p.MCPTask(ctx, seam.TaskRequest{Op: "list", Cursor: inner, Caller: srv.taskCaller(ctx)})
		inner = ""
		if err != nil {
			return taskError(id, errs.From(err))
		}
		if resp.Err != nil {
			return taskError(id, resp.Err)
		}
		for i := range resp.Tasks {
			tasks = append(tasks, task20251125(&resp.Tasks[i]))
		}
		if resp.NextCursor != "" {
			next = base64.RawURLEncoding.EncodeToString([]byte(names[i] + "\x00" + resp.NextCursor))
		}
	}
	res := map[string]any{"tasks": tasks}
	if next != "" {
		res["nextCursor"] = next
	}
	return mcp.NewJSONRPCResultResponse(id, res)
}

// MCPTasksWorking counts the MCP tasks working in the host's plugins, any
// owner's: a shared daemon stays up while some work, so their clients
// find the results when they come back.
func (srv *Server) MCPTasksWorking(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n := 0
	for _, name := range srv.catalog.MCPTaskPlugins() {
		if p := srv.mcpTaskPluginNamed(name); p != nil {
			if resp, err := p.MCPTask(ctx, seam.TaskRequest{Op: "working"}); err == nil {
				n += len(resp.Tasks)
			}
		}
	}
	return n
}

// mcpTaskPluginNamed is the running plugin name, nil when none runs.
func (srv *Server) mcpTaskPluginNamed(name string) mcpTaskPlugin {
	if p := srv.fleet.Process(name); p != nil {
		return p
	}
	return nil
}

// mcpTaskPlugin is what the host needs of a plugin to reach its tasks.
type mcpTaskPlugin interface {
	MCPTask(context.Context, seam.TaskRequest) (seam.TaskResponse, error)
}

// taskOp runs op on task id in the plugin its id names (the id's prefix,
// up to its dot, is the plugin's name).
func (srv *Server) taskOp(ctx context.Context, op, id string) (seam.TaskResponse, *errs.Error) {
	name, _, found := strings.Cut(id, ".")
	var p mcpTaskPlugin
	if found {
		p = srv.mcpTaskPluginNamed(name)
	}
	if p == nil {
		return seam.TaskResponse{}, errs.NotFoundf(errs.NotFound, "taskId", "task %q not found: no running plugin issued it", id)
	}
	resp, err := p.MCPTask(ctx, seam.TaskRequest{Op: op, TaskID: id, Caller: srv.taskCaller(ctx)})
	if err != nil {
		return seam.TaskResponse{}, errs.From(err)
	}
	if resp.Err != nil {
		return seam.TaskResponse{}, resp.Err
	}
	return resp, nil
}

// taskCaller is who asks about a task: the API key's user over
// authenticated HTTP, else the local operator. A plugin shows a task only
// to the owner that started it (docs/decisions.md D22).
func (srv *Server) taskCaller(ctx context.Context) seam.Caller {
	if p, ok := httpserve.PrincipalOf(ctx); ok && p.UserID != "" {
		return seam.Caller{ID: p.UserID, Source: principalSource(p), Scopes: p.Scopes}
	}
	return seam.Caller{Source: "env", ID: srv.catalog.SessionOf(ctx).AgentID}
}

// checkedTaskResult is an ended task's result, its output checked as a
// call's is (Dispatch).
func (srv *Server) checkedTaskResult(resp seam.TaskResponse) *seam.Result {
	out := resp.Result
	if out == nil {
		return pipeline.Fail(errs.Newf(500, errs.Internal, "task %s ended without a result", resp.Task.ID))
	}
	if out.Err != nil {
		return out
	}
	checked, e := checkOutput(resp.Task.Tool, out.Output)
	if e != nil {
		return pipeline.Fail(e)
	}
	out.Output = checked
	return out
}

// taskError answers a refused task request: an unknown, expired or other
// caller's task, a bad cursor or a task that cannot be cancelled is
// invalid params (-32602), as both revisions say; anything else is an
// internal error.
func taskError(id mcp.RequestId, e *errs.Error) mcp.JSONRPCMessage {
	code := mcp.INTERNAL_ERROR
	switch e.Code {
	case errs.NotFound, errs.InvalidTransition, errs.InvalidInput:
		code = mcp.INVALID_PARAMS
	}
	return mcp.NewJSONRPCError(id, code, e.Message, map[string]any{"code": e.Code, "details": e.Details})
}

// task20251125 is a task as the 2025-11-25 revision shapes it.
func task20251125(t *seam.TaskState) map[string]any {
	m := map[string]any{
		"taskId": t.ID, "status": t.Status, "createdAt": t.CreatedAt, "lastUpdatedAt": t.UpdatedAt,
		"ttl": t.TTL.Milliseconds(), "pollInterval": t.PollInterval.Milliseconds(),
	}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	return m
}

// taskStateless is a task as the 2026-07-28 extension shapes it.
func taskStateless(t *seam.TaskState) map[string]any {
	m := map[string]any{
		"taskId": t.ID, "status": t.Status, "createdAt": t.CreatedAt, "lastUpdatedAt": t.UpdatedAt,
		"ttlMs": t.TTL.Milliseconds(), "pollIntervalMs": t.PollInterval.Milliseconds(),
	}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	return m
}
