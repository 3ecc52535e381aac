package convert

import (
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/plugin"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

// taskStateFromProto is a plugin's task state; nil for nil.
func taskStateFromProto(t *pb.TaskState) *pipeline.TaskState {
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

// TaskRequestToProto is a task operation as the protocol carries it.
func TaskRequestToProto(r plugin.TaskRequest) *pb.TaskRequest {
	return &pb.TaskRequest{Op: r.Op, TaskId: r.TaskID, Cursor: r.Cursor, Caller: callerToProto(r.Caller)}
}

// TaskResponseFromProto is a plugin's answer to a task operation.
func TaskResponseFromProto(r *pb.TaskResponse) plugin.TaskResponse {
	out := plugin.TaskResponse{Task: taskStateFromProto(r.GetTask()), NextCursor: r.GetNextCursor(), Err: errorFromProto(r.GetError())}
	for _, t := range r.GetTasks() {
		out.Tasks = append(out.Tasks, *taskStateFromProto(t))
	}
	if res := r.GetResult(); res != nil {
		out.Result = OutcomeFromProto(res)
	}
	return out
}
