package lane

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

func progressEvent(n float64, msg string) *pb.CallToolEvent {
	return &pb.CallToolEvent{Event: &pb.CallToolEvent_Progress{Progress: &pb.Progress{Progress: n, Total: 3, Message: msg}}}
}

func logEvent(level, data string) *pb.CallToolEvent {
	return &pb.CallToolEvent{Event: &pb.CallToolEvent_Log{Log: &pb.LogMessage{Level: level, Logger: "t", Data: []byte(data)}}}
}

// recorded collects a call's events in the order the callbacks saw them.
type recorded struct {
	mu  sync.Mutex
	got []string
}

func (r *recorded) progress(p *pb.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("progress %g/%g %s", p.Progress, p.Total, p.Message))
}

func (r *recorded) log(m *pb.LogMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("log %s %s %s", m.Level, m.Logger, m.Data))
}

func (r *recorded) list() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "; ")
}

// TestCallEventsArriveInOrderBeforeTheResult: progress and log frames of a
// call reach its callbacks in the order the handler sent them, all of them
// before Call returns the result, and concurrent calls do not see each
// other's events.
func TestCallEventsArriveInOrderBeforeTheResult(t *testing.T) {
	handler := func(_ context.Context, req *pb.CallToolRequest, send Sender) *pb.ToolResult {
		tag := string(req.Arguments)
		for i := 1; i <= 3; i++ {
			send(progressEvent(float64(i), tag))
			send(logEvent("info", fmt.Sprintf(`"%s line %d"`, tag, i)))
		}
		send(&pb.CallToolEvent{Event: &pb.CallToolEvent_Result{Result: &pb.ToolResult{Status: 500}}}) // not an event: ignored
		return &pb.ToolResult{Status: 200, Output: []byte(`{}`)}
	}
	c, _ := pair(t, handler, big, big)
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				tag := fmt.Sprintf("c%d", g)
				var r recorded
				res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "t", Arguments: []byte(tag)}, r.progress, r.log)
				if err != nil || res.Status != 200 {
					errc <- fmt.Errorf("call: %v, %v", res, err)
					return
				}
				var want []string
				for i := 1; i <= 3; i++ {
					want = append(want, fmt.Sprintf("progress %d/3 %s", i, tag), fmt.Sprintf(`log info t "%s line %d"`, tag, i))
				}
				if got := r.list(); got != strings.Join(want, "; ") {
					errc <- fmt.Errorf("events when the result came:\n got %s\nwant %s", got, strings.Join(want, "; "))
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

// TestCallEventsWithoutCallbacksAreDropped: a call that takes no events
// gets its result alone; one that takes only log lines gets only those.
func TestCallEventsWithoutCallbacksAreDropped(t *testing.T) {
	handler := func(_ context.Context, _ *pb.CallToolRequest, send Sender) *pb.ToolResult {
		send(progressEvent(1, "p"))
		send(logEvent("warning", `"w"`))
		return &pb.ToolResult{Status: 201}
	}
	c, _ := pair(t, handler, big, big)
	res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "t"}, nil, nil)
	if err != nil || res.Status != 201 {
		t.Fatalf("call without callbacks: %v, %v", res, err)
	}
	var r recorded
	res, err = c.Call(context.Background(), &pb.CallToolRequest{Tool: "t"}, nil, r.log)
	if err != nil || res.Status != 201 {
		t.Fatalf("call with a log callback: %v, %v", res, err)
	}
	if got := r.list(); got != `log warning t "w"` {
		t.Fatalf("events = %q, want the log line alone", got)
	}
}

// TestOversizedCallEventsAreDroppedAndTheCallGoesOn: an event over the
// plugin's limit is not sent and one over the host's limit is read past;
// either way the call's other events and its result arrive, and the lane
// stays open.
func TestOversizedCallEventsAreDroppedAndTheCallGoesOn(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		clientLimit, serverLimit int
	}{
		{"over the plugin's limit", big, 200},
		{"over the host's limit", 200, big},
	} {
		t.Run(tt.name, func(t *testing.T) {
			handler := func(_ context.Context, req *pb.CallToolRequest, send Sender) *pb.ToolResult {
				send(logEvent("info", `"`+strings.Repeat("x", 500)+`"`))
				send(progressEvent(1, "small"))
				return &pb.ToolResult{Status: 200, Output: []byte(req.Tool)}
			}
			c, _ := pair(t, handler, tt.clientLimit, tt.serverLimit)
			for _, tool := range []string{"first", "second"} {
				var r recorded
				res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: tool}, r.progress, r.log)
				if err != nil || string(res.Output) != tool {
					t.Fatalf("%s: %v, %v", tool, res, err)
				}
				if got := r.list(); got != "progress 1/3 small" {
					t.Fatalf("%s: events = %q, want the small progress alone", tool, got)
				}
			}
		})
	}
}

// TestEventsForUnknownCallsAreDropped: a progress or log frame whose call
// id is not waiting (finished, cancelled, never sent) is dropped and the
// connection stays open; the waiting call gets only its own events.
func TestEventsForUnknownCallsAreDropped(t *testing.T) {
	a, b := net.Pipe()
	c := NewClient(a, big)
	defer c.Close()
	go func() {
		defer b.Close()
		fr := frameReader{r: b, limit: big}
		for {
			h, _, _, err := fr.next()
			if err != nil {
				return
			}
			if h.kind != kindCall {
				continue
			}
			write := func(kind byte, id uint64, msg proto.Message) {
				body, _ := proto.Marshal(msg)
				frame := make([]byte, headerSize, headerSize+len(body))
				putHeader(frame, header{size: uint32(len(body)), kind: kind, id: id})
				_, _ = b.Write(append(frame, body...)) // fails once the test closed the lane
			}
			write(kindProgress, h.id+100, &pb.Progress{Progress: 9, Message: "stranger"})
			write(kindLog, h.id+100, &pb.LogMessage{Level: "info", Data: []byte(`"stranger"`)})
			write(kindLog, h.id, &pb.LogMessage{Level: "info", Logger: "t", Data: []byte(`"mine"`)})
			write(kindResult, h.id, &pb.ToolResult{Status: 200})
			// After the result the call is finished: these are dropped.
			write(kindProgress, h.id, &pb.Progress{Progress: 10, Message: "late"})
			write(kindLog, h.id, &pb.LogMessage{Level: "info", Data: []byte(`"late"`)})
		}
	}()
	for range 2 {
		var r recorded
		res, err := c.Call(context.Background(), &pb.CallToolRequest{Tool: "t"}, r.progress, r.log)
		if err != nil || res.Status != 200 {
			t.Fatalf("call: %v, %v", res, err)
		}
		if got := r.list(); got != `log info t "mine"` {
			t.Fatalf("events = %q, want only the call's own", got)
		}
	}
}

// TestHostSendsNoEventFrames: a progress or log frame from the host is not
// part of the lane; the plugin's server ends the connection.
func TestHostSendsNoEventFrames(t *testing.T) {
	for _, kind := range []byte{kindProgress, kindLog} {
		a, b := net.Pipe()
		srv := &Server{Handle: echo, Limit: big}
		done := make(chan error, 1)
		go func() { done <- srv.ServeConn(context.Background(), b) }()
		frame := make([]byte, headerSize)
		putHeader(frame, header{kind: kind, id: 1})
		if _, err := a.Write(frame); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err == nil || !strings.Contains(err.Error(), "not sent to a plugin") {
			t.Fatalf("kind %d: ServeConn = %v, want a malformed-frame error", kind, err)
		}
		a.Close()
	}
}
