package lane

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// inlinePair serves h on a lane whose "quick" calls may run inline.
func inlinePair(t *testing.T, h Handler) *Client {
	t.Helper()
	c, _ := pairServer(t, &Server{Handle: h, Limit: big, Inline: func(req *pb.CallToolRequest) bool { return req.Tool == "quick" }}, big)
	return c
}

// lockstep is a handler: "slow" waits for slowGo, "quick" for quickGo,
// anything else answers at once; each reports its start on started.
func lockstep(started chan<- string, slowGo, quickGo <-chan struct{}) Handler {
	return func(_ context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
		started <- req.Tool
		switch req.Tool {
		case "slow":
			<-slowGo
		case "quick":
			<-quickGo
		}
		return &pb.ToolResult{Status: 200, Output: []byte(req.Tool)}
	}
}

// A quick call on an idle lane runs where it was read: the lane reads no
// other frame until it returns, so a call sent meanwhile is not answered
// (its caller gives up), and once the quick call returns the lane reads on.
func TestAQuickCallOnAnIdleLaneRunsWhereItWasRead(t *testing.T) {
	started := make(chan string, 8)
	quickGo := make(chan struct{})
	c := inlinePair(t, lockstep(started, nil, quickGo))
	release := sync.OnceFunc(func() { close(quickGo) })
	t.Cleanup(release) // before the lane's own, so a failed test ends
	quick := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "quick"}, nil, nil)
		quick <- err
	}()
	if got := <-started; got != "quick" {
		t.Fatalf("%s started, want quick", got)
	}
	// However slow this machine, the ping cannot be read while the quick
	// call holds the lane; the window only bounds how long a lane that
	// hands calls to workers has to answer it (and so fail the test).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := c.Call(ctx, &pb.CallToolRequest{Tool: "ping"}, nil, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call sent while the inline call ran: %v, want no answer until it returns", err)
	}
	select {
	case got := <-started:
		t.Fatalf("%s started while the inline call ran", got)
	default:
	}
	release()
	if err := <-quick; err != nil {
		t.Fatal(err)
	}
	res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "after"}, nil, nil)
	if err != nil || string(res.Output) != "after" {
		t.Fatalf("after the inline call: %v %v", res, err)
	}
}

// While another call runs, a quick call goes to a worker like any other:
// the lane keeps reading, so a third call is answered while both wait.
// Were the quick call run inline, the third would never be read and the
// quick call never released.
func TestAQuickCallOnABusyLaneRunsBesideTheOthers(t *testing.T) {
	started := make(chan string, 8)
	slowGo, quickGo := make(chan struct{}), make(chan struct{})
	c := inlinePair(t, lockstep(started, slowGo, quickGo))
	release := sync.OnceFunc(func() { close(quickGo); close(slowGo) })
	t.Cleanup(release) // before the lane's own, so a failed test ends
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := make(chan error, 2)
	for _, tool := range []string{"slow", "quick"} {
		go func() {
			_, err := c.Call(ctx, &pb.CallToolRequest{Tool: tool}, nil, nil)
			results <- err
		}()
		if got := <-started; got != tool {
			t.Fatalf("%s started, want %s", got, tool)
		}
	}
	res, err := c.Call(ctx, &pb.CallToolRequest{Tool: "ping"}, nil, nil)
	if err != nil || string(res.Output) != "ping" {
		t.Fatalf("a call beside a running quick call: %v %v", res, err)
	}
	release()
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
}
