package sdk

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

type waitIn struct {
	Label string `json:"label" jsonschema:"minLength=1"`
}

type waitOut struct {
	Label string `json:"label"`
}

// taskPlugin has one task tool, which reports progress and then waits for
// release (or its context) before answering; label "now" answers at once.
func taskPlugin(t *testing.T, dir string, release <-chan struct{}) *server {
	t.Helper()
	p := New("waiter", "0.1.0")
	AddTool(p, Tool[waitIn, waitOut]{
		Name: "waiter_wait", Description: "Waits.", TaskSupport: TaskOptional,
		Handler: func(ctx context.Context, in waitIn) (waitOut, error) {
			ReportProgress(ctx, 1, 2, "half way for "+in.Label)
			if in.Label == "now" {
				return waitOut(in), nil
			}
			select {
			case <-release:
				return waitOut(in), nil
			case <-ctx.Done():
				return waitOut{}, ctx.Err()
			}
		},
	})
	if err := p.start(context.Background(), Config{DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	return &server{p: p}
}

func startTask(t *testing.T, s *server, caller *pb.Caller, label string) *pb.TaskState {
	t.Helper()
	res := s.callProto(context.Background(), &pb.CallToolRequest{
		Tool: "waiter_wait", Arguments: []byte(`{"label":"` + label + `"}`), Caller: caller, Task: &pb.TaskParams{TtlMs: 60000},
	}, func(*pb.CallToolEvent) {})
	if res.Error != nil || res.Task == nil {
		t.Fatalf("a task-augmented call answered %v, want a task", res)
	}
	return res.Task
}

func taskOp(t *testing.T, s *server, caller *pb.Caller, op, id string) *pb.TaskResponse {
	t.Helper()
	resp, err := s.Task(context.Background(), &pb.TaskRequest{Op: op, TaskId: id, Caller: caller})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// waitStatus polls task id until its status is want and its status
// message starts with message.
func waitStatus(t *testing.T, s *server, caller *pb.Caller, id, want, message string) *pb.TaskState {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := taskOp(t, s, caller, "get", id)
		if r.Task != nil && r.Task.Status == want && strings.HasPrefix(r.Task.StatusMessage, message) {
			return r.Task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, want %s", id, r, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTaskLifecycle: a task-augmented call answers with a working task at
// once; get shows its progress; cancel stops the handler and the task stays
// cancelled; another completes and its result is fetched; list pages the
// owner's tasks; another owner sees none of them.
func TestTaskLifecycle(t *testing.T) {
	release := make(chan struct{})
	s := taskPlugin(t, t.TempDir(), release)
	local := &pb.Caller{Id: "agent", Source: "env"}

	a := startTask(t, s, local, "a")
	if a.Status != TaskWorking || !strings.HasPrefix(a.TaskId, "waiter.") || a.TtlMs != 60000 || a.PollIntervalMs != 1000 {
		t.Fatalf("created task %v", a)
	}
	// Progress is written once a second at most; the first report is.
	waitStatus(t, s, local, a.TaskId, TaskWorking, "half way for a")
	if w := taskOp(t, s, &pb.Caller{Id: "u-9", Source: "api_key"}, "working", ""); len(w.Tasks) != 1 || w.Tasks[0].TaskId != a.TaskId {
		t.Errorf("working tasks %v, want a whoever asks", w.Tasks)
	}
	c := taskOp(t, s, local, "cancel", a.TaskId)
	if c.Error != nil || c.Task.Status != TaskCancelled {
		t.Fatalf("cancel answered %v", c)
	}
	r := taskOp(t, s, local, "result", a.TaskId)
	if r.Task.Status != TaskCancelled || r.Result == nil || r.Result.Error == nil || r.Result.Error.Code != "ERR_CANCELLED" {
		t.Fatalf("cancelled task's result %v, want ERR_CANCELLED", r)
	}
	if again := taskOp(t, s, local, "cancel", a.TaskId); again.Error == nil || !strings.Contains(again.Error.Message, "terminal status 'cancelled'") {
		t.Errorf("cancelling a cancelled task answered %v", again)
	}

	b := startTask(t, s, local, "b")
	close(release)
	r = taskOp(t, s, local, "result", b.TaskId)
	if r.Task.Status != TaskCompleted || r.Result == nil || string(r.Result.Output) != `{"label":"b"}` {
		t.Fatalf("completed task's result %v", r)
	}

	if w := taskOp(t, s, local, "working", ""); len(w.Tasks) != 0 {
		t.Errorf("working tasks %v after both ended", w.Tasks)
	}
	l := taskOp(t, s, local, "list", "")
	if len(l.Tasks) != 2 || l.Tasks[0].TaskId != a.TaskId || l.Tasks[1].TaskId != b.TaskId || l.NextCursor != "" {
		t.Errorf("list %v, want a then b", l)
	}
	if bad, _ := s.Task(context.Background(), &pb.TaskRequest{Op: "list", Cursor: "nope", Caller: local}); bad.Error == nil {
		t.Error("an unknown cursor was accepted")
	}

	other := &pb.Caller{Id: "u-2", Source: "api_key"}
	if g := taskOp(t, s, other, "get", b.TaskId); g.Error == nil || g.Error.Code != "ERR_NOT_FOUND" {
		t.Errorf("another owner's get answered %v, want not found", g)
	}
	if l := taskOp(t, s, other, "list", ""); len(l.Tasks) != 0 {
		t.Errorf("another owner lists %v", l.Tasks)
	}
	if g := taskOp(t, s, local, "get", "waiter.../../x"); g.Error == nil {
		t.Error("a malformed task id was accepted")
	}
}

// TestTaskRefusals: bad arguments are the call's answer (no task), a
// tool without task support refuses a task, and so does a plugin
// configured without a data directory.
func TestTaskRefusals(t *testing.T) {
	bare := taskPlugin(t, "", nil)
	if res := bare.callProto(context.Background(), &pb.CallToolRequest{Tool: "waiter_wait", Arguments: []byte(`{"label":"x"}`), Task: &pb.TaskParams{}},
		func(*pb.CallToolEvent) {}); res.Task != nil || res.Error == nil || res.Error.Code != "ERR_UNAVAILABLE" {
		t.Errorf("a task without a data directory: %v", res)
	}
	s := taskPlugin(t, t.TempDir(), nil)
	AddTool(s.p, Tool[waitIn, waitOut]{Name: "waiter_quick", Description: "Quick.",
		Handler: func(_ context.Context, in waitIn) (waitOut, error) { return waitOut(in), nil }})
	for _, req := range []*pb.CallToolRequest{
		{Tool: "waiter_wait", Arguments: []byte(`{"label":""}`), Task: &pb.TaskParams{}},
		{Tool: "waiter_quick", Arguments: []byte(`{"label":"x"}`), Task: &pb.TaskParams{}},
	} {
		res := s.callProto(context.Background(), req, func(*pb.CallToolEvent) {})
		if res.Task != nil || res.Error == nil || res.Error.Code != "ERR_INVALID_INPUT" {
			t.Errorf("%s: %v, want a refusal and no task", req.Tool, res)
		}
	}
}

// TestTaskInterruptedAfterRestart: a task working when its process ended
// is reported failed as interrupted by the next process on the same data
// directory; a completed task's result is still there.
func TestTaskInterruptedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := taskPlugin(t, dir, make(chan struct{}))
	local := &pb.Caller{Id: "agent", Source: "env"}
	done := startTask(t, s, local, "now")
	if r := taskOp(t, s, local, "result", done.TaskId); r.Task.Status != TaskCompleted {
		t.Fatalf("first task %v", r)
	}
	stuck := startTask(t, s, local, "stuck")
	waitStatus(t, s, local, stuck.TaskId, TaskWorking, "half way")
	if err := s.p.stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	again := taskPlugin(t, dir, make(chan struct{}))
	r := taskOp(t, again, local, "result", stuck.TaskId)
	if r.Task.Status != TaskFailed || !r.Task.Interrupted || !strings.HasPrefix(r.Task.StatusMessage, "interrupted:") ||
		r.Result == nil || r.Result.Error == nil || r.Result.Error.Status != 503 {
		t.Errorf("task working at the restart: %v, want failed as interrupted", r)
	}
	r = taskOp(t, again, local, "result", done.TaskId)
	var out waitOut
	if r.Task.Status != TaskCompleted || r.Result == nil || json.Unmarshal(r.Result.Output, &out) != nil || out.Label != "now" {
		t.Errorf("completed task after the restart: %v", r)
	}
}

// TestTaskExpiry: a task past its ttl is gone, and its file with it.
func TestTaskExpiry(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	b, err := openTasks("waiter", dir, New("waiter", "0").Logger(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	r, e := b.start(Caller{Source: "env"}, "waiter_wait", time.Minute, func(context.Context) Result { return Result{Output: []byte(`{}`), Status: 200} })
	if e != nil {
		t.Fatal(e)
	}
	if _, e := b.result(context.Background(), "local", r.ID); e != nil {
		t.Fatal(e)
	}
	now = now.Add(2 * time.Minute)
	if _, e := b.get("local", r.ID); e == nil || !strings.Contains(e.Message, "expired") {
		t.Errorf("expired task: %v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "tasks", "waiter", strings.TrimPrefix(r.ID, "waiter.")+".json")); !os.IsNotExist(err) {
		t.Errorf("the expired task's file is still there: %v", err)
	}
}
