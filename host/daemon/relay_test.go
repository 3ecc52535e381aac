package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// fakeDaemon listens on p's socket, welcomes every connection and hands it
// to serve; it counts the connections (sessions and resumes) it accepted.
type fakeDaemon struct {
	p     Paths
	conns atomic.Int32
	ln    net.Listener
}

func startFakeDaemon(t *testing.T, serve func(conn net.Conn, hello Hello, r *bufio.Reader)) *fakeDaemon {
	t.Helper()
	d := &fakeDaemon{p: PathsFor(t.TempDir())}
	ln, err := net.Listen("unix", d.p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	d.ln = ln
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			d.conns.Add(1)
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				var h Hello
				_ = json.Unmarshal(line, &h)
				_, _ = conn.Write([]byte(`{"ok":true,"daemon_pid":999999999}` + "\n"))
				serve(conn, h, r)
			}()
		}
	}()
	return d
}

// runRelay relays in through d and returns what reached the client; it
// fails the test if the relay does not end.
func runRelay(t *testing.T, d *fakeDaemon, drain time.Duration, in string) []map[string]json.RawMessage {
	t.Helper()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- RunRelay(context.Background(), RelayConfig{
			Paths: d.p, Timeout: 5 * time.Second, Drain: drain, Attempts: 3,
			Start: func() (func() (bool, error), error) { return func() (bool, error) { return false, nil }, nil },
		}, strings.NewReader(in), &syncWriter{w: &out})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("relay: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the relay did not exit after its client closed its input")
	}
	var msgs []map[string]json.RawMessage
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the relay wrote %q: %v", line, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// answersByID counts the answers per id.
func answersByID(msgs []map[string]json.RawMessage) map[string]int {
	n := map[string]int{}
	for _, m := range msgs {
		if _, isAnswer := m["id"]; isAnswer && m["method"] == nil {
			key, ok := rpcid.Key(m["id"])
			if !ok {
				key = "invalid:" + string(m["id"])
			}
			n[key]++
		}
	}
	return n
}

// A daemon that answers every request twice (as a replayed request is
// answered by the daemon that died and the fresh one) reaches the client
// once per request, whatever escaping the daemon uses for a string id.
func TestRelayDeliversEachAnswerOnce(t *testing.T) {
	t.Parallel()
	d := startFakeDaemon(t, func(conn net.Conn, _ Hello, r *bufio.Reader) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(line, &req)
			id := bytes.ReplaceAll(req.ID, []byte("<"), []byte(`\u003c`))
			answer := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), []byte(`,"result":{}}`+"\n")...)
			_, _ = conn.Write(answer)
			_, _ = conn.Write(answer)
		}
	})
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":"a<b","method":"ping"}` + "\n" +
		`{"jsonrpc":"2.0","id":"x","method":"ping"}` + "\n"
	got := answersByID(runRelay(t, d, time.Minute, in))
	want := map[string]int{"n1": 1, "sa<b": 1, "sx": 1}
	if len(got) != len(want) {
		t.Fatalf("answers per id: %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("id %s answered %d times, want %d (all: %v)", k, got[k], n, got)
		}
	}
}

// A request the daemon never answers, after the client closed its input,
// is answered with an error once the drain ends, and the relay exits.
func TestRelayAbandonsCallsAfterItsClientLeft(t *testing.T) {
	t.Parallel()
	testEnded := make(chan struct{})
	t.Cleanup(func() { close(testEnded) })
	d := startFakeDaemon(t, func(conn net.Conn, _ Hello, r *bufio.Reader) {
		_, _ = io.Copy(io.Discard, r) // reads, never answers
		<-testEnded
	})
	got := runRelay(t, d, 50*time.Millisecond, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	if n := answersByID(got); n["n7"] != 1 || len(n) != 1 {
		t.Fatalf("answers %v, want one for id 7", got)
	}
	if !bytes.Contains(got[0]["error"], []byte("closed its input")) {
		t.Errorf("the abandoned call's answer says %s", got[0]["error"])
	}
}

// A daemon that drops the session without answering, every time, is
// resumed a bounded number of times once the client has left: the relay
// never reconnects in a loop.
func TestRelayDoesNotLoopWhenTheDaemonNeverAnswers(t *testing.T) {
	t.Parallel()
	d := startFakeDaemon(t, func(conn net.Conn, _ Hello, r *bufio.Reader) {
		_, _ = r.ReadBytes('\n')
		// Close without answering, as a daemon that dies would.
	})
	got := runRelay(t, d, time.Hour, `{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"t"}}`+"\n")
	if n := answersByID(got); n["sq"] != 1 {
		t.Fatalf("answers %v, want one error for id q", got)
	}
	if c := d.conns.Load(); c > 5 {
		t.Errorf("the relay connected %d times for one unanswered call; want at most 1 + Attempts resumes", c)
	}
}

// A request with an id MCP does not allow is refused by the daemon with id
// null; the relay passes that answer on and does not wait for another.
func TestRelayDoesNotWaitForInvalidIDs(t *testing.T) {
	t.Parallel()
	d := startFakeDaemon(t, func(conn net.Conn, _ Hello, r *bufio.Reader) {
		for {
			if _, err := r.ReadBytes('\n'); err != nil {
				return
			}
			_, _ = conn.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}` + "\n"))
		}
	})
	in := ""
	for _, id := range []string{"[1]", "{}", "true", "1.5", "null", "9007199254740993"} {
		in += `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n"
	}
	got := runRelay(t, d, time.Hour, in)
	if len(got) != 6 {
		t.Fatalf("the client got %d answers, want the daemon's 6 refusals: %v", len(got), got)
	}
}

// TestRelayRefusesAnIDInFlight: a second request with the id of one still
// in flight is refused by the relay at once with -32600 naming the id and
// never reaches the daemon; the first gets its own answer, so the id gets
// exactly two answers (docs/decisions.md D42). Before, the daemon ran both
// and the relay passed on one answer for the two.
func TestRelayRefusesAnIDInFlight(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var received []string
	d := startFakeDaemon(t, func(conn net.Conn, _ Hello, r *bufio.Reader) {
		// Answers nothing until the client is done sending, so the first
		// request is in flight when the second comes.
		var lines [][]byte
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			lines = append(lines, line)
		}
		for _, line := range lines {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(line, &req)
			mu.Lock()
			received = append(received, req.Params.Name)
			mu.Unlock()
			_, _ = conn.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"ran":"` + req.Params.Name + `"}}` + "\n"))
		}
	})
	in := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"first"}}` + "\n" +
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"second"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"string-id"}}` + "\n"
	got := runRelay(t, d, time.Minute, in)
	if n := answersByID(got); n["n7"] != 2 || n["s7"] != 1 || len(n) != 2 {
		t.Fatalf("answers per id %v, want two for 7 (the refusal and the first's result) and one for \"7\": %v", n, got)
	}
	var refusals, results int
	for _, m := range got {
		if string(m["id"]) != "7" {
			continue
		}
		switch {
		case m["error"] != nil:
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(m["error"], &e)
			if e.Code != -32600 || !strings.Contains(e.Message, "request id 7 is already in flight in this session; use a new id") {
				t.Errorf("refusal %s", m["error"])
			}
			refusals++
		case string(m["result"]) == `{"ran":"first"}`:
			results++
		default:
			t.Errorf("id 7 answered with %s", m["result"])
		}
	}
	if refusals != 1 || results != 1 {
		t.Fatalf("id 7: %d refusals and %d results of the first call, want one each: %v", refusals, results, got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(received, ",") != "first,string-id" {
		t.Fatalf("the daemon received %v; the refused request must never reach it", received)
	}
}

// A request the client sends while the relay is resuming a lost session
// (the relay waits for the new daemon's answer to the replayed initialize)
// reaches the new daemon once: the resume replays only the requests its
// hello named. Sent twice, the second copy is refused as an id in flight,
// and that refusal could be the answer the client gets for a write that
// ran (docs/decisions.md D42).
func TestRelayResumeSendsANewRequestOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]int{} // ids the second daemon read
	restoring := make(chan struct{})
	d := startFakeDaemon(t, func(conn net.Conn, hello Hello, r *bufio.Reader) {
		answer := func(id json.RawMessage) {
			_, _ = conn.Write(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), []byte(`,"result":{}}`+"\n")...))
		}
		if !hello.Resume {
			// The first daemon answers initialize, reads id 1 and dies.
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					return
				}
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				_ = json.Unmarshal(line, &req)
				if req.Method == "initialize" {
					answer(req.ID)
					continue
				}
				if req.Method == "tools/call" {
					return
				}
			}
		}
		var initID json.RawMessage
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(line, &req)
			switch {
			case req.Method == "initialize":
				initID = req.ID
				close(restoring)
			case len(req.ID) > 0 && req.Method != "":
				mu.Lock()
				seen[string(req.ID)]++
				n := len(seen)
				mu.Unlock()
				if n == 1 && initID != nil && string(req.ID) == "2" {
					// id 2 arrived while the initialize waits: answer
					// the initialize now, and id 2 once the resume has
					// had time to replay what it would.
					answer(initID)
					initID = nil
					id := req.ID
					time.AfterFunc(500*time.Millisecond, func() { answer(id) })
					continue
				}
				answer(req.ID)
			}
		}
	})
	in, feed := io.Pipe()
	var out bytes.Buffer
	sw := &syncWriter{w: &out}
	done := make(chan error, 1)
	go func() {
		done <- RunRelay(context.Background(), RelayConfig{
			Paths: d.p, Timeout: 5 * time.Second, Drain: time.Minute, Attempts: 3,
			Start: func() (func() (bool, error), error) { return func() (bool, error) { return false, nil }, nil },
		}, in, sw)
	}()
	_, _ = io.WriteString(feed, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`+"\n")
	select {
	case <-restoring:
	case <-time.After(60 * time.Second):
		t.Fatal("the relay never resumed on a second daemon")
	}
	_, _ = io.WriteString(feed, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`+"\n")
	// The resume is over once id 2 is answered: the daemon answers it only
	// after the replay, so a second copy would have reached it by then.
	poll.Until(t, time.Minute, "the answer to id 2", func() bool {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		return bytes.Contains(out.Bytes(), []byte(`"id":2`))
	})
	feed.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("relay: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the relay did not exit")
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["1"] != 1 || seen["2"] != 1 {
		t.Fatalf("the resumed daemon read id 1 %d times and id 2 %d times; want each once", seen["1"], seen["2"])
	}
}
