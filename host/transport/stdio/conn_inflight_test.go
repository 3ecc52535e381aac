package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
)

// gatedHandler answers tools/call: a call named "gated" waits until the
// test opens its gate (or the call is cancelled), any other answers at
// once; every answer names the call that ran it.
type gatedHandler struct {
	gate  chan struct{}
	calls atomic.Int64 // tool calls run
}

func (h *gatedHandler) Enter(context.Context) func() { return func() {} }
func (h *gatedHandler) Register(ctx context.Context, _ server.ClientSession) (context.Context, func(), error) {
	return ctx, func() {}, nil
}
func (h *gatedHandler) Serving(clientsession.Listener, *clientsession.Settings) func() {
	return func() {}
}
func (h *gatedHandler) HandleMessage(_ context.Context, msg []byte) mcp.JSONRPCMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	var id any
	_ = json.Unmarshal(m.ID, &id)
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), mcp.EmptyResult{})
}
func (h *gatedHandler) LiftArguments(ctx context.Context, _ jsonrpc.Probe, msg []byte) (context.Context, []byte) {
	return ctx, msg
}
func (h *gatedHandler) RefuseSubscription(context.Context, []byte) (mcp.JSONRPCError, bool) {
	return mcp.JSONRPCError{}, false
}
func (h *gatedHandler) AnswerExtension(context.Context, string, []byte) (mcp.JSONRPCMessage, bool) {
	return nil, false
}
func (h *gatedHandler) CallTool(ctx context.Context, p jsonrpc.Probe, line []byte) (mcp.JSONRPCMessage, bool) {
	h.calls.Add(1)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(line, &m)
	var id any
	_ = json.Unmarshal(m.ID, &id)
	text := "ran " + m.Params.Name
	if m.Params.Name == "gated" {
		select {
		case <-h.gate:
		case <-ctx.Done():
			text = "cancelled gated"
		}
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), mcp.NewToolResultText(text)), true
}

// servedPipe is a session served over pipes, read line by line.
type servedPipe struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
}

func serveGated(t *testing.T, h *gatedHandler) *servedPipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	srv := New(h, hclog.NewNullLogger())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, inR, outW, Options{Session: &clientsession.Settings{}})
		_ = outW.Close()
	}()
	p := &servedPipe{t: t, in: inW, lines: make(chan map[string]any, 64)}
	go func() {
		defer close(p.lines)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]any
				if json.Unmarshal(line, &m) != nil {
					t.Errorf("not JSON on the session's output: %q", line)
					continue
				}
				p.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		cancel()
		<-done
	})
	return p
}

func (p *servedPipe) send(lines ...string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, strings.Join(lines, "\n")+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next message on the session's output.
func (p *servedPipe) next(what string) map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("the session ended waiting for %s", what)
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

func call(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

func resultText(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

func wantInFlightRefusal(t *testing.T, m map[string]any, id any, named string) {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	if e == nil || m["id"] != id {
		t.Fatalf("want the refusal of the second request with id %v, got %v", id, m)
	}
	msg, _ := e["message"].(string)
	if e["code"] != float64(mcp.INVALID_REQUEST) || !strings.Contains(msg, "request id "+named+" is already in flight") {
		t.Fatalf("refusal %v: want -32600 naming id %s", e, named)
	}
}

// TestSecondRequestWithAnIDInFlightIsRefused: a request whose id the
// session still holds is refused at once with -32600 naming the id, never
// run nor merged with the first, which gets its own answer; once that is
// answered the id is free again (docs/decisions.md D42). Before the
// refusal both requests ran under one idempotency key and got one outcome.
func TestSecondRequestWithAnIDInFlightIsRefused(t *testing.T) {
	t.Parallel()
	h := &gatedHandler{gate: make(chan struct{})}
	p := serveGated(t, h)

	p.send(call("7", "gated"), call("7", "quick"))
	wantInFlightRefusal(t, p.next("the refusal"), float64(7), "7")
	// A string "7" is another id; a notification is no request.
	p.send(call(`"7"`, "quick"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if m := p.next(`the call with id "7"`); m["id"] != "7" || resultText(m) != "ran quick" {
		t.Fatalf(`the call with id "7" (another id than 7) did not run: %v`, m)
	}
	p.send(call(`"s"`, "gated"), call(`"s"`, "quick"))
	wantInFlightRefusal(t, p.next("the refusal of a string id"), "s", `"s"`)

	close(h.gate)
	got := map[any]string{}
	for range 2 {
		m := p.next("the gated calls' answers")
		got[m["id"]] = resultText(m)
	}
	if got[float64(7)] != "ran gated" || got["s"] != "ran gated" {
		t.Fatalf("the first requests did not get their own answers: %v", got)
	}
	// Free again once answered: the same id runs a new call.
	p.send(call("7", "quick"))
	if m := p.next("the reused id's answer"); m["id"] != float64(7) || resultText(m) != "ran quick" {
		t.Fatalf("id 7 reused after its answer: %v", m)
	}
	if n := h.calls.Load(); n != 4 {
		t.Fatalf("%d tool calls ran, want 4: a refused request must never run", n)
	}
}

// TestCancelledRequestFreesItsID: a call cancelled by
// notifications/cancelled holds its id until it is done; then the id is
// free.
func TestCancelledRequestFreesItsID(t *testing.T) {
	t.Parallel()
	h := &gatedHandler{gate: make(chan struct{})}
	p := serveGated(t, h)
	p.send(call("3", "gated"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	if m := p.next("the cancelled call's answer"); m["id"] != float64(3) || resultText(m) != "cancelled gated" {
		t.Fatalf("cancelled call: %v", m)
	}
	p.send(call("3", "quick"))
	if m := p.next("the reused id's answer"); m["id"] != float64(3) || resultText(m) != "ran quick" {
		t.Fatalf("id 3 reused after its call was cancelled: %v", m)
	}
}

// TestIDReusedRightAfterItsAnswerIsNeverRefused: a client that sends the
// next request with the same id as soon as it reads the answer is never
// refused: the id is freed before the answer is written.
func TestIDReusedRightAfterItsAnswerIsNeverRefused(t *testing.T) {
	t.Parallel()
	h := &gatedHandler{gate: make(chan struct{})}
	p := serveGated(t, h)
	for i := range 300 {
		line := call("1", "quick")
		if i%2 == 1 {
			line = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		}
		p.send(line)
		if m := p.next("the answer"); m["error"] != nil || m["id"] != float64(1) {
			t.Fatalf("round %d: %v", i, m)
		}
	}
}
