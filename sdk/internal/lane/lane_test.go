package lane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// pair starts a server with h over a real Unix socket and returns a client
// dialled to it; serverConn receives the server's end for tests that cut it.
func pair(t *testing.T, h Handler, clientLimit, serverLimit int) (*Client, chan net.Conn) {
	t.Helper()
	return pairServer(t, &Server{Handle: h, Limit: serverLimit}, clientLimit)
}

// pairServer is pair for a server set up by the test (event handlers).
func pairServer(t *testing.T, srv *Server, clientLimit int) (*Client, chan net.Conn) {
	t.Helper()
	path, conns := serveOnce(t, srv)
	c, err := Dial(context.Background(), path, clientLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, conns
}

// serveOnce serves srv on the first connection to a fresh Unix socket,
// whose path it returns with that connection once accepted; the serving
// ends with the test (after the cleanups registered later, the client's).
func serveOnce(t *testing.T, srv *Server) (string, chan net.Conn) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		conn, err := ln.Accept()
		ln.Close()
		if err != nil {
			return
		}
		conns <- conn
		_ = srv.ServeConn(ctx, conn)
	}()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	return path, conns
}

func echo(_ context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
	return &pb.ToolResult{Status: 200, Output: append([]byte(req.Tool+":"), req.Arguments...)}
}

const big = 1 << 20

func TestConcurrentCallsGetTheirOwnResults(t *testing.T) {
	c, _ := pair(t, echo, big, big)
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				tool, args := fmt.Sprintf("t%d", g), fmt.Sprintf(`{"i":%d}`, i)
				res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: tool, Arguments: []byte(args)}, nil, nil)
				if err != nil {
					errc <- err
					return
				}
				if got, want := string(res.Output), tool+":"+args; got != want {
					errc <- fmt.Errorf("got %q, want %q", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// blockUntilDone is a handler that reports its context and waits for it
// to end.
func blockUntilDone(seen chan<- context.Context) Handler {
	return func(ctx context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
		seen <- ctx
		<-ctx.Done()
		time.Sleep(50 * time.Millisecond) // the caller gives up first
		return &pb.ToolResult{Status: 200}
	}
}

func TestDeadlineTravelsToThePlugin(t *testing.T) {
	seen := make(chan context.Context, 1)
	c, _ := pair(t, blockUntilDone(seen), big, big)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	want, _ := ctx.Deadline()
	_, err := c.Call(ctx, &pb.CallToolRequest{Tool: "slow"}, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
	hctx := <-seen
	got, ok := hctx.Deadline()
	if !ok || !got.Equal(want) {
		t.Fatalf("handler deadline = %v (%v), want %v", got, ok, want)
	}
	select {
	case <-hctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context never ended")
	}
}

func TestCancelReachesTheHandler(t *testing.T) {
	seen := make(chan context.Context, 1)
	c, _ := pair(t, blockUntilDone(seen), big, big)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, &pb.CallToolRequest{Tool: "slow"}, nil, nil)
		done <- err
	}()
	hctx := <-seen
	if _, ok := hctx.Deadline(); ok {
		t.Fatal("a call without a deadline got one")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	select {
	case <-hctx.Done(): // the cancel frame arrived
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the call did not cancel the handler")
	}
	// The lane still carries calls.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	go func() {
		_, err := c.Call(ctx, &pb.CallToolRequest{Tool: "again"}, nil, nil)
		done <- err
	}()
	<-seen
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second call: %v, want its deadline", err)
	}
}

func typed(t *testing.T, res *pb.ToolResult, err error, code string, status int32) {
	t.Helper()
	if err != nil {
		t.Fatalf("err = %v, want a result carrying %s", err, code)
	}
	if res.Error == nil || res.Error.Code != code || res.Status != status || res.Error.Status != status {
		t.Fatalf("result = %v, want %s with status %d", res, code, status)
	}
}

func TestHandlerPanicAnswersInternalAndTheLaneLives(t *testing.T) {
	c, _ := pair(t, func(ctx context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
		if req.Tool == "boom" {
			panic("kaboom")
		}
		return echo(ctx, req, nil)
	}, big, big)
	res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "boom"}, nil, nil)
	typed(t, res, err, errs.Internal, 500)
	if !strings.Contains(res.Error.Message, "boom") {
		t.Fatalf("message %q does not name the tool", res.Error.Message)
	}
	res, err = c.Call(context.Background(), &pb.CallToolRequest{Tool: "ok"}, nil, nil)
	if err != nil || string(res.Output) != "ok:" {
		t.Fatalf("after a panic: %v, %v", res, err)
	}
}

func TestOversizedFramesAnswerTypedErrorsAndKeepTheConnection(t *testing.T) {
	tests := []struct {
		name                     string
		clientLimit, serverLimit int
		args                     int
		wantErr                  bool // typed error from Call itself
		wantCode                 string
		wantStatus               int32
	}{
		{"call over the host's limit is refused before sending", 100, big, 200, true, errs.LimitExceeded, 413},
		{"call over the plugin's limit is skipped and answered", big, 100, 200, false, errs.LimitExceeded, 413},
		{"result over the plugin's limit is replaced", big, 150, 100, false, errs.LimitExceeded, 413},
		{"result over the host's limit is skipped and failed", 150, big, 100, true, errs.LimitExceeded, 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The result doubles the arguments, so a call can fit a limit
			// its result exceeds.
			double := func(_ context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
				if req.Tool == "small" {
					return echo(context.Background(), req, nil)
				}
				return &pb.ToolResult{Status: 200, Output: append(append([]byte(nil), req.Arguments...), req.Arguments...)}
			}
			c, _ := pair(t, double, tt.clientLimit, tt.serverLimit)
			res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "t", Arguments: []byte(strings.Repeat("x", tt.args))}, nil, nil)
			if tt.wantErr {
				e, ok := errs.As(err)
				if !ok || e.Code != tt.wantCode || int32(e.Status) != tt.wantStatus {
					t.Fatalf("err = %v, want %s %d", err, tt.wantCode, tt.wantStatus)
				}
			} else {
				typed(t, res, err, tt.wantCode, tt.wantStatus)
			}
			res, err = c.Call(context.Background(), &pb.CallToolRequest{Tool: "small"}, nil, nil)
			if err != nil || string(res.Output) != "small:" {
				t.Fatalf("the lane did not survive: %v, %v", res, err)
			}
		})
	}
}

func TestPluginGoneMidCallFailsThePendingCallAtOnce(t *testing.T) {
	seen := make(chan context.Context, 1)
	c, conns := pair(t, blockUntilDone(seen), big, big)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "slow"}, nil, nil)
		done <- err
	}()
	hctx := <-seen
	(<-conns).Close() // the plugin's end goes away, as when its process dies
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending call hung after the plugin went away")
	}
	select {
	case <-hctx.Done(): // the server cancels what it was running
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin kept running a call on a dead connection")
	}
	<-c.Done()
	if _, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "later"}, nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call on a closed lane: %v, want ErrClosed", err)
	}
}

func TestPeerNotSpeakingTheLaneClosesIt(t *testing.T) {
	a, b := net.Pipe()
	c := NewClient(a, big)
	go func() { _, _ = b.Write([]byte("HTTP/1.1 200 OK\r\n\r\nnot a frame")) }()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("garbage from the peer did not end the lane")
	}
	b.Close()
}

func TestEventsReachTheHandlerAndFailuresComeBackTyped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 8)
	srv := &Server{Handle: echo, Limit: big, HandleEvent: func(_ context.Context, ev *pb.Event) error {
		switch ev.Type {
		case "boom":
			panic("kaboom")
		case "refused":
			return errs.New(409, errs.Conflict, "not now")
		case "plain":
			return errors.New("disk full")
		}
		got <- ev.Type + ":" + string(ev.Data)
		return nil
	}}
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			_ = srv.ServeConn(context.Background(), conn)
		}
	}()
	c, err := Dial(context.Background(), path, big)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deliver := func(typ string) error {
		return c.Deliver(context.Background(), &pb.HandleEventRequest{Event: &pb.Event{Type: typ, Data: []byte(`{"n":1}`)}})
	}
	if err := deliver("task.created"); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != `task.created:{"n":1}` {
		t.Fatalf("handler got %q", g)
	}
	for _, tt := range []struct {
		typ    string
		code   string
		status int
	}{
		{"refused", errs.Conflict, 409},
		{"plain", errs.Internal, 500},
		{"boom", errs.Internal, 500},
	} {
		e, ok := errs.As(deliver(tt.typ))
		if !ok || e.Code != tt.code || e.Status != tt.status {
			t.Fatalf("%s: err = %v, want %s %d", tt.typ, e, tt.code, tt.status)
		}
	}
	if err := c.Deliver(context.Background(), &pb.HandleEventRequest{}); err == nil {
		t.Fatal("an event frame without an event was accepted")
	}
	// Calls still work beside events.
	if res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "x"}, nil, nil); err != nil || string(res.Output) != "x:" {
		t.Fatalf("call after events: %v, %v", res, err)
	}
}

// TestReusedFrameBuffersLeaveResultsIntact: both ends read every frame into
// one reused buffer; what a call or a result carries must not change when
// the next frame arrives (large pages and small calls alike, in turn).
func TestReusedFrameBuffersLeaveResultsIntact(t *testing.T) {
	var seen sync.Map
	c, _ := pair(t, func(ctx context.Context, req *pb.CallToolRequest, _ Sender) *pb.ToolResult {
		seen.Store(req.Tool, req) // kept past the next frame
		return echo(ctx, req, nil)
	}, big, big)
	var results []*pb.ToolResult
	var want []string
	for i := 0; i < 20; i++ {
		args := fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i)), (i%3)*40000))
		res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: fmt.Sprintf("t%d", i), Arguments: []byte(args)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		want = append(want, fmt.Sprintf("t%d:%s", i, args))
	}
	for i, res := range results {
		if string(res.Output) != want[i] {
			t.Fatalf("result %d changed after later frames: %.40q…", i, res.Output)
		}
		req, _ := seen.Load(fmt.Sprintf("t%d", i))
		if got := "t" + fmt.Sprint(i) + ":" + string(req.(*pb.CallToolRequest).Arguments); got != want[i] {
			t.Fatalf("call %d's arguments changed after later frames", i)
		}
	}
}
