package sdk

import (
	"context"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/lane"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// openTasks opens the task book when a tool declares TaskSupport and the
// host gave a data directory: once, at the first Configure (a later one
// keeps the book and its running tasks).
func (p *Plugin) openTasks(dataDir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks != nil || !p.declaresTasks() {
		return nil
	}
	if dataDir == "" {
		// Embedded without one (tests): plain calls only; startTask says
		// why a task is refused.
		return nil
	}
	b, err := openTasks(p.name, dataDir, p.logger.Named("tasks"), time.Now)
	if err != nil {
		return errs.New(500, errs.InitFailed, err.Error())
	}
	p.tasks = b
	return nil
}

// declaresTasks reports whether a tool may run as a task; p.mu is held.
func (p *Plugin) declaresTasks() bool {
	for _, t := range p.tools {
		if t.info.TaskSupport != "" {
			return true
		}
	}
	return false
}

func (p *Plugin) taskBook() *tasks {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.tasks
}

// startTask answers a task-augmented call: the arguments are checked now
// (a refusal is the call's answer, no task is made), then the tool runs in
// the background under a task whose state the result carries.
func (s *server) startTask(ctx context.Context, req *pb.CallToolRequest) *pb.ToolResult {
	fail := func(e *errs.Error) *pb.ToolResult {
		return &pb.ToolResult{Error: lane.ErrorToProto(e), Status: int32(e.Status)}
	}
	t, args, e := s.p.checkedCall(req.Tool, req.Arguments)
	if e != nil {
		return fail(e)
	}
	if t.info.TaskSupport == "" {
		return fail(errs.Invalidf("task", "taskSupport", "tool %s does not run as a task; call it without task", req.Tool))
	}
	b := s.p.taskBook()
	if b == nil {
		return fail(errs.Newf(503, errs.Unavailable, "plugin %s keeps tasks in a data directory and was configured without one; call %s without task", s.p.name, req.Tool))
	}
	caller := CallerFrom(callContext(ctx, req))
	rid := req.RequestId
	r, e := b.start(caller, req.Tool, time.Duration(req.Task.GetTtlMs())*time.Millisecond, func(ctx context.Context) Result {
		return s.p.run(withRequestID(ctx, rid), t, args)
	})
	if e != nil {
		return fail(e)
	}
	s.idle.called()
	return &pb.ToolResult{Task: taskToProto(r), Status: 202}
}

// Task serves the task operations the host routes to this plugin.
func (s *server) Task(ctx context.Context, req *pb.TaskRequest) (*pb.TaskResponse, error) {
	b := s.p.taskBook()
	if b == nil {
		e := errs.NotFoundf(errs.NotFound, "taskId", "plugin %s runs no tasks", s.p.name)
		return &pb.TaskResponse{Error: lane.ErrorToProto(e)}, nil
	}
	owner := taskOwner(CallerFrom(callContext(ctx, &pb.CallToolRequest{Caller: req.Caller})))
	var r *taskRecord
	var e *errs.Error
	switch req.Op {
	case "get":
		r, e = b.get(owner, req.TaskId)
	case "cancel":
		r, e = b.cancel(owner, req.TaskId)
	case "result":
		r, e = b.result(ctx, owner, req.TaskId)
	case "working":
		resp := &pb.TaskResponse{}
		for _, r := range b.working() {
			resp.Tasks = append(resp.Tasks, taskToProto(r))
		}
		return resp, nil
	case "list":
		page, next, e := b.list(owner, req.Cursor)
		if e != nil {
			return &pb.TaskResponse{Error: lane.ErrorToProto(e)}, nil
		}
		resp := &pb.TaskResponse{NextCursor: next}
		for _, r := range page {
			resp.Tasks = append(resp.Tasks, taskToProto(r))
		}
		return resp, nil
	default:
		e = errs.Invalidf("op", "enum", "task operation %q is none of get, list, cancel, result, working", req.Op)
	}
	if e != nil {
		return &pb.TaskResponse{Error: lane.ErrorToProto(e)}, nil
	}
	resp := &pb.TaskResponse{Task: taskToProto(r)}
	if req.Op == "result" && r.Result != nil {
		if e := r.Result.Err; e != nil && e.Status == 0 {
			e.Status = r.Result.Status // not kept in the error's JSON
		}
		resp.Result = resultToProto(Result{Output: r.Result.Output, Err: r.Result.Err, Status: r.Result.Status, Content: r.Result.Content})
	}
	return resp, nil
}

func taskToProto(r *taskRecord) *pb.TaskState {
	return &pb.TaskState{
		TaskId: r.ID, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano), LastUpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TtlMs: r.TTL.Milliseconds(), PollIntervalMs: r.PollInterval.Milliseconds(), Tool: r.Tool, Interrupted: r.Interrupted,
	}
}
