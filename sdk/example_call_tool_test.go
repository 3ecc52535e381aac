package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// fakeCore answers task_get as the core area would, for the examples.
func fakeCore(_ context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(args, &in)
	if name != "task_get" || in.TaskID != "T-1" {
		return nil, errs.NotFoundf(errs.TaskNotFound, "task_id", "no task %q", in.TaskID)
	}
	return json.RawMessage(`{"task_id":"T-1","title":"Write docs","status":"todo"}`), nil
}

// CallTool runs another area's tool as the running call's caller; a tool
// that uses it declares CallsTools.
func ExampleCallTool() {
	ctx := sdk.WithToolCaller(context.Background(), fakeCore)
	var task struct {
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	if err := sdk.CallTool(ctx, "task_get", map[string]string{"task_id": "T-1"}, &task); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(task.Title, task.Status)
	err := sdk.CallTool(ctx, "task_get", map[string]string{"task_id": "T-9"}, nil)
	fmt.Println(err.(*sdk.Error).Code)
	// Output:
	// Write docs todo
	// ERR_TASK_NOT_FOUND
}

// Outside a call whose tool declares CallsTools there is no one to act
// as: CallTool refuses with 409.
func ExampleCallTool_outsideACall() {
	err := sdk.CallTool(context.Background(), "task_get", map[string]string{"task_id": "T-1"}, nil)
	fmt.Println(err.(*sdk.Error).Status)
	// Output: 409
}

// A ToolCaller stands in for the host in a plugin's tests.
func ExampleToolCaller() {
	var calls []string
	var f sdk.ToolCaller = func(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
		calls = append(calls, name+" "+string(args)+" key="+sdk.IdempotencyOf(ctx).Key)
		return json.RawMessage(`{"task_id":"T-5"}`), nil
	}
	ctx := sdk.WithToolCaller(context.Background(), f)
	ctx = sdk.WithIdempotency(ctx, sdk.Idempotency{Key: "k1/item-1"})
	_ = sdk.CallTool(ctx, "task_create", map[string]string{"title": "Write docs"}, nil)
	fmt.Println(calls[0])
	// Output: task_create {"title":"Write docs"} key=k1/item-1
}

func ExampleWithToolCaller() {
	ctx := sdk.WithToolCaller(context.Background(), fakeCore)
	var task struct {
		TaskID string `json:"task_id"`
	}
	_ = sdk.CallTool(ctx, "task_get", json.RawMessage(`{"task_id":"T-1"}`), &task)
	fmt.Println(task.TaskID)
	// Output: T-1
}
