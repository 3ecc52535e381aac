package sdd

import (
	"context"
	"strconv"

	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// coreBoard is the core area's task board as the engine's TaskBoard: its
// task_create and task_get, called through the host as the running call's
// caller (sdk.CallTool), so each inner call has that caller's rights and
// no more (docs/decisions.md D45).
type coreBoard struct{ ctx context.Context }

// CreateTask makes a plan item a task in the caller's session project
// (seam.Caller.Project). Under the running call's
// idempotency key, each item's task_create carries a key of its own
// derived from it, so a repeated sdd_plan makes each task once
// (docs/decisions.md D42).
func (b coreBoard) CreateTask(t engine.NewTask) (string, error) {
	ctx := b.ctx
	if k := sdk.IdempotencyOf(ctx); k.Key != "" {
		k.Key += "/sdd_plan/task/" + strconv.Itoa(t.Item)
		ctx = sdk.WithIdempotency(ctx, k)
	}
	args := map[string]any{"title": t.Title, "description": t.Description}
	// Named, not left to core's default, so the plan's tasks land in
	// the project the call ran in.
	if project := sdk.CallerFrom(ctx).Project; project != "" {
		args["project"] = project
	}
	if len(t.DependsOn) > 0 {
		args["depends_on"] = t.DependsOn
	}
	var out struct {
		TaskID string `json:"task_id"`
	}
	if err := sdk.CallTool(ctx, "task_create", args, &out); err != nil {
		return "", err
	}
	return out.TaskID, nil
}

// CheckTask answers nil when task id exists; an unknown one is a 404
// naming sdd_lease's taskId.
func (b coreBoard) CheckTask(id string) error {
	err := sdk.CallTool(b.ctx, "task_get", map[string]string{"task_id": id}, nil)
	if e, ok := errs.As(err); ok && e.Code == errs.TaskNotFound {
		return errs.NotFoundf(errs.TaskNotFound, "taskId", "no task %s: name an existing task (task_list shows them) or a work item that is not a task id (plan-3)", id)
	}
	return err
}
