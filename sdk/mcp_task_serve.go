package sdk

import (
	"context"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/internal/convert"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
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
func (s *server) startTask(ctx context.Context, c seam.Call) seam.Result {
	fail := func(e *errs.Error) seam.Result { return seam.Result{Err: e, Status: e.Status} }
	t, args, e := s.p.checkedCall(c.Tool, c.Args)
	if e != nil {
		return fail(e)
	}
	if t.info.TaskSupport == "" {
		return fail(errs.Invalidf("task", "taskSupport", "tool %s does not run as a task; call it without task", c.Tool))
	}
	b := s.p.taskBook()
	if b == nil {
		return fail(errs.Newf(503, errs.Unavailable, "plugin %s keeps tasks in a data directory and was configured without one; call %s without task", s.p.name, c.Tool))
	}
	caller := CallerFrom(callContext(ctx, c))
	rid := c.RequestID
	r, e := b.start(caller, c.Tool, c.Task.TTL, func(ctx context.Context) Result {
		return s.p.run(withRequestID(ctx, rid), t, args)
	})
	if e != nil {
		return fail(e)
	}
	s.idle.called()
	state := seamTask(r)
	return seam.Result{Task: &state, Status: 202}
}

// Task serves the task operations the host routes to this plugin.
func (s *server) Task(ctx context.Context, req *pb.TaskRequest) (*pb.TaskResponse, error) {
	return convert.TaskResponseToProto(s.task(ctx, convert.TaskRequestFromProto(req))), nil
}

// task runs one task operation; a refusal is the response's Err.
func (s *server) task(ctx context.Context, req seam.TaskRequest) seam.TaskResponse {
	b := s.p.taskBook()
	if b == nil {
		return seam.TaskResponse{Err: errs.NotFoundf(errs.NotFound, "taskId", "plugin %s runs no tasks", s.p.name)}
	}
	owner := taskOwner(req.Caller)
	var r *taskRecord
	var e *errs.Error
	switch req.Op {
	case "get":
		r, e = b.get(owner, req.TaskID)
	case "cancel":
		r, e = b.cancel(owner, req.TaskID)
	case "result":
		r, e = b.result(ctx, owner, req.TaskID)
	case "working":
		var resp seam.TaskResponse
		for _, r := range b.working() {
			resp.Tasks = append(resp.Tasks, seamTask(r))
		}
		return resp
	case "list":
		page, next, e := b.list(owner, req.Cursor)
		if e != nil {
			return seam.TaskResponse{Err: e}
		}
		resp := seam.TaskResponse{NextCursor: next}
		for _, r := range page {
			resp.Tasks = append(resp.Tasks, seamTask(r))
		}
		return resp
	default:
		e = errs.Invalidf("op", "enum", "task operation %q is none of get, list, cancel, result, working", req.Op)
	}
	if e != nil {
		return seam.TaskResponse{Err: e}
	}
	state := seamTask(r)
	resp := seam.TaskResponse{Task: &state}
	if req.Op == "result" && r.Result != nil {
		if e := r.Result.Err; e != nil && e.Status == 0 {
			e.Status = r.Result.Status // not kept in the error's JSON
		}
		resp.Result = &seam.Result{Output: r.Result.Output, Err: r.Result.Err, Status: r.Result.Status, Content: r.Result.Content}
	}
	return resp
}

// seamTask is a task's record as its state crosses to the host (times in
// RFC 3339, UTC).
func seamTask(r *taskRecord) seam.TaskState {
	return seam.TaskState{
		ID: r.ID, Tool: r.Tool, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: r.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.UTC().Format(time.RFC3339Nano),
		TTL: r.TTL, PollInterval: r.PollInterval, Interrupted: r.Interrupted,
	}
}
