package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// inFlightRefusal decodes an answer that must be the -32600 refusal of a
// request with id 7.
func inFlightRefusal(t *testing.T, status int, body string) {
	t.Helper()
	var m struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &m) != nil || m.ID != float64(7) || m.Error.Code != mcp.INVALID_REQUEST ||
		!strings.Contains(m.Error.Message, "request id 7 is already in flight in this session; use a new id") {
		t.Fatalf("want the -32600 refusal of id 7, got %d %s", status, body)
	}
}

func toolCall(id, name string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

// TestHTTPSessionRefusesAnIDInFlight: within one MCP session, a POST whose
// id a running request holds is answered at once with -32600 naming it and
// never runs; the first gets its own answer; another session may use the
// id; once answered, the id is free (docs/decisions.md D42). Both answer
// shapes: a JSON answer, and an event stream whose first event (progress)
// was written while the call still ran.
func TestHTTPSessionRefusesAnIDInFlight(t *testing.T) {
	t.Parallel()
	for _, streamed := range []bool{false, true} {
		name := "json"
		if streamed {
			name = "event-stream"
		}
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			started := make(chan struct{}, 8)
			var mu sync.Mutex
			ran := map[string]int{}
			slow := server.ServerTool{Tool: mcp.NewTool("slow"), Handler: func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				ran["slow"]++
				mu.Unlock()
				if streamed {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": "p", "progress": 1})
				}
				started <- struct{}{}
				<-release
				return mcp.NewToolResultText("slow done"), nil
			}}
			quick := server.ServerTool{Tool: mcp.NewTool("quick"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				ran["quick"]++
				mu.Unlock()
				return mcp.NewToolResultText("quick done"), nil
			}}
			srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour}, slow, quick)
			var once sync.Once
			releaseAll := func() { once.Do(func() { close(release) }) }
			t.Cleanup(releaseAll) // before the server closes, so a failure cannot hang it
			resp, _ := do(t, srv, http.MethodPost, "", "", initializeBody)
			sid := resp.Header.Get(server.HeaderKeySessionID)
			other, _ := do(t, srv, http.MethodPost, "", "", initializeBody)

			firstBody := make(chan string, 1)
			progressed := make(chan struct{})
			go func() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(toolCall("7", "slow")))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set(server.HeaderKeySessionID, sid)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					firstBody <- err.Error()
					return
				}
				defer resp.Body.Close()
				var b strings.Builder
				sc := bufio.NewScanner(resp.Body)
				seen := false
				for sc.Scan() {
					b.WriteString(sc.Text() + "\n")
					if !seen && strings.Contains(sc.Text(), "notifications/progress") {
						seen = true
						close(progressed)
					}
				}
				firstBody <- b.String()
			}()
			<-started
			if streamed {
				// The answer's stream has started (its progress event is
				// read) while the call still runs.
				select {
				case <-progressed:
				case <-time.After(30 * time.Second):
					t.Fatal("no progress event on the first request's stream")
				}
			}
			dup, body := do(t, srv, http.MethodPost, "", sid, toolCall("7", "quick"))
			inFlightRefusal(t, dup.StatusCode, body)
			if r, body := do(t, srv, http.MethodPost, "", other.Header.Get(server.HeaderKeySessionID), toolCall("7", "quick")); r.StatusCode != 200 || !strings.Contains(body, "quick done") {
				t.Fatalf("another session's id 7 was refused: %d %s", r.StatusCode, body)
			}
			releaseAll()
			select {
			case b := <-firstBody:
				if !strings.Contains(b, "slow done") || strings.Contains(b, "quick done") {
					t.Fatalf("the first request's answer: %s", b)
				}
				if streamed && !strings.Contains(b, "notifications/progress") {
					t.Fatalf("the first answer was not an event stream with progress: %s", b)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the first request got no answer")
			}
			if r, body := do(t, srv, http.MethodPost, "", sid, toolCall("7", "quick")); r.StatusCode != 200 || !strings.Contains(body, "quick done") {
				t.Fatalf("id 7 reused after its answer: %d %s", r.StatusCode, body)
			}
			mu.Lock()
			defer mu.Unlock()
			if ran["slow"] != 1 || ran["quick"] != 2 {
				t.Fatalf("calls run %v, want slow once and quick twice (other session, reuse): the refused one must never run", ran)
			}
		})
	}
}

// TestHTTPIDReusedRightAfterItsAnswerIsNeverRefused: the id is freed as
// the answer is written, so a client that sends the same id as soon as it
// has read the answer is never refused.
func TestHTTPIDReusedRightAfterItsAnswerIsNeverRefused(t *testing.T) {
	t.Parallel()
	quick := server.ServerTool{Tool: mcp.NewTool("quick"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("quick done"), nil
	}}
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour}, quick)
	resp, _ := do(t, srv, http.MethodPost, "", "", initializeBody)
	sid := resp.Header.Get(server.HeaderKeySessionID)
	for i := range 100 {
		if r, body := do(t, srv, http.MethodPost, "", sid, toolCall("7", "quick")); r.StatusCode != 200 || !strings.Contains(body, "quick done") {
			t.Fatalf("round %d: %d %s", i, r.StatusCode, body)
		}
	}
}

func TestCarriesAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		write string
		want  bool
	}{
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"cairn-1\",\"method\":\"elicitation/create\",\"params\":{}}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n", true},
		{"event: message\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"x\"}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"\\u0069d\":7,\"result\":{}}\n\n", true},
		{": keep-alive\n\n", false},
	} {
		if got := carriesAnswer([]byte(tc.write)); got != tc.want {
			t.Errorf("carriesAnswer(%q) = %v, want %v", tc.write, got, tc.want)
		}
	}
}
