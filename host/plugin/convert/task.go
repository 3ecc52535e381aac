package convert

import (
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/plugin"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

func taskParamsFromProto(t *pb.TaskParams) *pipeline.TaskParams {
	if t == nil {
		return nil
	}
	return &pipeline.TaskParams{TTL: time.Duration(t.GetTtlMs()) * time.Millisecond}
}

// TaskStateFromProto is a plugin's task state; nil for nil.
func TaskStateFromProto(t *pb.TaskState) *pipeline.TaskState {
	if t == nil {
		return nil
	}
	return &pipeline.TaskState{
		ID: t.GetTaskId(), Tool: t.GetTool(), Status: t.GetStatus(), StatusMessage: t.GetStatusMessage(),
		CreatedAt: t.GetCreatedAt(), UpdatedAt: t.GetLastUpdatedAt(),
		TTL: time.Duration(t.GetTtlMs()) * time.Millisecond, PollInterval: time.Duration(t.GetPollIntervalMs()) * time.Millisecond,
		Interrupted: t.GetInterrupted(),
	}
}

// TaskStateToProto is a task state as the protocol carries it; nil for nil.
func TaskStateToProto(t *pipeline.TaskState) *pb.TaskState {
	if t == nil {
		return nil
	}
	return &pb.TaskState{
		TaskId: t.ID, Tool: t.Tool, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.UpdatedAt,
		TtlMs: t.TTL.Milliseconds(), PollIntervalMs: t.PollInterval.Milliseconds(), Interrupted: t.Interrupted,
	}
}

// TaskRequestToProto is a task operation as the protocol carries it.
func TaskRequestToProto(r plugin.TaskRequest) *pb.TaskRequest {
	return &pb.TaskRequest{Op: r.Op, TaskId: r.TaskID, Cursor: r.Cursor, Caller: CallerToProto(r.Caller)}
}

// TaskResponseFromProto is a plugin's answer to a task operation.
func TaskResponseFromProto(r *pb.TaskResponse) plugin.TaskResponse {
	out := plugin.TaskResponse{Task: TaskStateFromProto(r.GetTask()), NextCursor: r.GetNextCursor(), Err: ErrorFromProto(r.GetError())}
	for _, t := range r.GetTasks() {
		out.Tasks = append(out.Tasks, *TaskStateFromProto(t))
	}
	if res := r.GetResult(); res != nil {
		out.Result = OutcomeFromProto(res)
	}
	return out
}
