package sdk

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// A call runs inline on an idle lane only when its tool is Quick at that
// moment and it is a plain call, not an MCP task.
func TestOnlyAQuickToolsPlainCallRunsInline(t *testing.T) {
	p := New("quicktest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	var local atomic.Bool
	answer := func(context.Context, countIn) (countOut, error) { return countOut{}, nil }
	AddTool(p, Tool[countIn, countOut]{Name: "quicktest_get", Description: "A point read.", Quick: local.Load, Handler: answer})
	AddTool(p, Tool[countIn, countOut]{Name: "quicktest_list", Description: "A scan.", Handler: answer})
	s := &server{p: p}
	for _, tc := range []struct {
		req   *pb.CallToolRequest
		local bool
		want  bool
	}{
		{req: &pb.CallToolRequest{Tool: "quicktest_get"}, local: true, want: true},
		{req: &pb.CallToolRequest{Tool: "quicktest_get"}, local: false, want: false},
		{req: &pb.CallToolRequest{Tool: "quicktest_get", Task: &pb.TaskParams{}}, local: true, want: false},
		{req: &pb.CallToolRequest{Tool: "quicktest_list"}, local: true, want: false},
		{req: &pb.CallToolRequest{Tool: "quicktest_nothing"}, local: true, want: false},
	} {
		local.Store(tc.local)
		if got := s.inlineCall(tc.req); got != tc.want {
			t.Errorf("%s (task %v) with the store local %v: inline %v, want %v", tc.req.Tool, tc.req.Task != nil, tc.local, got, tc.want)
		}
	}
}

// A tool that calls other tools waits on the host, so it cannot be Quick.
func TestAQuickToolThatCallsToolsIsRefused(t *testing.T) {
	p := New("quicktest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	defer func() {
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, "cannot be Quick") {
			t.Fatalf("got %v, want a panic saying the tool cannot be Quick", r)
		}
	}()
	AddTool(p, Tool[countIn, countOut]{
		Name: "quicktest_relay", Description: "Calls another tool.", CallsTools: true,
		Quick:   func() bool { return true },
		Handler: func(context.Context, countIn) (countOut, error) { return countOut{}, nil },
	})
}
