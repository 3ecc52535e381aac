package lane

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
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

// writeSignal tells of each write the client made once it is on the
// socket.
type writeSignal struct {
	net.Conn
	wrote chan struct{}
}

func (w writeSignal) Write(p []byte) (int, error) {
	n, err := w.Conn.Write(p)
	w.wrote <- struct{}{}
	return n, err
}

// A quick call on an idle lane runs where it was read: the lane reads no
// other frame until it returns. A call whose frame is already on the socket
// while the quick call runs starts only once the quick call has ended; a
// lane that handed the quick call to a worker would be free to start it at
// once, and the yields below give it every chance to, without waiting on
// the clock.
func TestAQuickCallOnAnIdleLaneRunsWhereItWasRead(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	started := make(chan string, 8)
	quickGo := make(chan struct{})
	release := sync.OnceFunc(func() { close(quickGo) })
	srv := &Server{Limit: big, Inline: func(req *pb.CallToolRequest) bool { return req.Tool == "quick" },
		Handle: func(_ context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
			note(req.Tool + " started")
			started <- req.Tool
			if req.Tool == "quick" {
				<-quickGo
				note("quick ended")
			}
			return &pb.ToolResult{Status: 200, Output: []byte(req.Tool)}
		}}
	path, _ := serveOnce(t, srv)
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	conn := writeSignal{Conn: raw, wrote: make(chan struct{}, 8)}
	c := NewClient(conn, big)
	t.Cleanup(func() {
		release() // first, so a failed test ends
		c.Close()
	})

	results := make(chan error, 2)
	call := func(tool string) {
		res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: tool}, nil, nil)
		if err == nil && string(res.Output) != tool {
			err = fmt.Errorf("%s answered %q", tool, res.Output)
		}
		results <- err
	}
	go call("quick")
	<-conn.wrote
	if got := <-started; got != "quick" {
		t.Fatalf("%s started, want quick", got)
	}
	go call("ping")
	<-conn.wrote // the ping's frame is on the socket
	for i := 0; i < 100_000 && len(started) == 0; i++ {
		runtime.Gosched()
	}
	release()
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"quick started", "quick ended", "ping started"}; !slices.Equal(order, want) {
		t.Fatalf("order %q, want %q: a call started while the inline call held the lane", order, want)
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
