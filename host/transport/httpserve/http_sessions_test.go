package httpserve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// keyRing is an Authenticator over a fixed set of keys.
type keyRing map[string]Principal

func (k keyRing) Authenticate(_ context.Context, key string) (Principal, error) {
	if p, ok := k[key]; ok {
		return p, nil
	}
	return Principal{}, errs.New(401, errs.Unauthorized, "unknown key")
}

// testHandler serves an MCP server of its own: the HTTP transport's
// handler chain without a host.
type testHandler struct{ mcp *server.MCPServer }

func (h testHandler) MCPServer() *server.MCPServer { return h.mcp }
func (h testHandler) EnterCluster(context.Context) (*pgxpool.Pool, func(), error) {
	return nil, func() {}, nil
}
func (h testHandler) LiftToolArguments(ctx context.Context, _ string, msg []byte) (context.Context, []byte) {
	return ctx, msg
}
func (h testHandler) RefuseSubscription(context.Context, []byte) (mcp.JSONRPCError, bool) {
	return mcp.JSONRPCError{}, false
}
func (h testHandler) AnswerExtension(context.Context, string, []byte) (mcp.JSONRPCMessage, bool) {
	return nil, false
}

// httpTestServer serves an MCP server with tools through the HTTP
// transport's handler chain, one call at a time per session.
func httpTestServer(t *testing.T, auth Authenticator, hs httpSettings, tools ...server.ServerTool) (*httptest.Server, *httpSessions) {
	t.Helper()
	h := testHandler{mcp: server.NewMCPServer("cairn", "test", server.WithToolCapabilities(true))}
	h.mcp.AddTools(tools...)
	s := New(h, clientsession.Limits{MaxMessage: clientsession.DefaultMaxMessage, MaxCalls: 1}, hclog.NewNullLogger())
	sessions := newHTTPSessions(hs.sessionIdle, s.limits.MaxCalls)
	mcpHTTP := server.NewStreamableHTTPServer(h.mcp, server.WithEndpointPath("/mcp"), server.WithSessionIdManagerResolver(sessions))
	srv := httptest.NewServer(s.handler(auth, sessions, hs, mcpHTTP))
	t.Cleanup(srv.Close)
	return srv, sessions
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func do(t *testing.T, srv *httptest.Server, method, key, session, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		req.Header.Set(server.HeaderKeySessionID, session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestHTTPSessionsBoundToTheirKey(t *testing.T) {
	t.Parallel()
	keys := keyRing{"ka": {UserID: "alice", KeyID: "key_a", Scopes: []string{"read"}}, "kb": {UserID: "bob", KeyID: "key_b", Scopes: []string{"read"}}}
	srv, sessions := httpTestServer(t, keys, httpSettings{sessionIdle: time.Hour})
	resp, body := do(t, srv, http.MethodPost, "ka", "", initializeBody)
	id := resp.Header.Get(server.HeaderKeySessionID)
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, id, body)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, c := range []struct {
		name, method, key, session, body string
		status                           int
	}{
		{"own session", http.MethodPost, "ka", id, list, 200},
		{"another key", http.MethodPost, "kb", id, list, 404},
		{"forged id", http.MethodPost, "ka", "cairn-" + strings.Repeat("0", 32), list, 404},
		{"mcp-go style id", http.MethodPost, "ka", "mcp-session-8f1d7c52-2d7b-4d7e-9a52-0c3c3e0d9c11", list, 404},
		{"no id", http.MethodPost, "ka", "", list, 400},
		{"GET with another key", http.MethodGet, "kb", id, "", 404},
		{"GET with a forged id", http.MethodGet, "ka", "cairn-x", "", 404},
		{"GET without an id", http.MethodGet, "ka", "", "", 400},
		{"DELETE with another key", http.MethodDelete, "kb", id, "", 404},
		{"still alive after those", http.MethodPost, "ka", id, list, 200},
		{"DELETE with its key", http.MethodDelete, "ka", id, "", 200},
		{"ended", http.MethodPost, "ka", id, list, 404},
		{"DELETE again", http.MethodDelete, "ka", id, "", 404},
	} {
		resp, body := do(t, srv, c.method, c.key, c.session, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d: %s", c.name, resp.StatusCode, c.status, body)
			continue
		}
		if c.status >= 400 {
			var env struct {
				Error struct {
					Code    string         `json:"code"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(body), &env) != nil || env.Error.Details["field"] != server.HeaderKeySessionID {
				t.Errorf("%s: refusal does not name the header: %s", c.name, body)
			}
		}
	}
	if n := sessions.count(); n != 0 {
		t.Errorf("%d sessions tracked after DELETE, want 0", n)
	}
}

func TestHTTPSessionsModernRequestsNeedNone(t *testing.T) {
	t.Parallel()
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour})
	resp, body := do(t, srv, http.MethodPost, "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"Mcp-Protocol-Version", "2026-07-28")
	if resp.StatusCode == 400 && strings.Contains(body, server.HeaderKeySessionID) || resp.StatusCode == 404 {
		t.Fatalf("a stateless request was asked for a session: %d %s", resp.StatusCode, body)
	}
}

func TestHTTPSessionsExpireWhenIdle(t *testing.T) {
	t.Parallel()
	s := newHTTPSessions(time.Minute, 1)
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }
	a := s.open("key:a")
	b := s.open("key:a")
	now = now.Add(50 * time.Second)
	if _, err := s.use(a, "key:a"); err != nil {
		t.Fatalf("within the idle time: %v", err)
	}
	now = now.Add(50 * time.Second) // a was used 50s ago, b 100s ago
	if _, err := s.use(a, "key:a"); err != nil {
		t.Fatalf("use keeps a session alive: %v", err)
	}
	if _, err := s.use(b, "key:a"); err == nil {
		t.Fatal("a session idle past the limit still works")
	}
	now = now.Add(2 * time.Minute)
	s.open("key:c") // sweeps
	if n := s.count(); n != 1 {
		t.Fatalf("%d sessions after the sweep, want only the new one", n)
	}
}

func TestHTTPMessageSizeBound(t *testing.T) {
	t.Parallel()
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour})
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", clientsession.DefaultMaxMessage) + `"}}`
	resp, body := do(t, srv, http.MethodPost, "", "", big)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "CAIRN_MAX_MESSAGE") {
		t.Fatalf("oversized body: %d %.200s", resp.StatusCode, body)
	}
	if resp, body := do(t, srv, http.MethodPost, "", "", initializeBody); resp.StatusCode != 200 {
		t.Fatalf("a normal request after it: %d %s", resp.StatusCode, body)
	}
}

func TestHTTPSessionEndClosesItsStream(t *testing.T) {
	t.Parallel()
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour})
	resp, _ := do(t, srv, http.MethodPost, "", "", initializeBody)
	id := resp.Header.Get(server.HeaderKeySessionID)
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(server.HeaderKeySessionID, id)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	t.Cleanup(func() { _ = stream.Body.Close() }) // before the server closes, so a failure cannot hang it
	closed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stream.Body); close(closed) }()
	select {
	case <-closed:
		t.Fatal("the stream closed before the session ended")
	case <-time.After(200 * time.Millisecond):
	}
	if resp, body := do(t, srv, http.MethodDelete, "", id, ""); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the session's event stream is still open after DELETE")
	}
}

func TestHTTPSessionCallsWaitInOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan string, 4)
	slow := server.ServerTool{Tool: mcp.NewTool("slow", mcp.WithString("n")), Handler: func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- req.GetString("n", "")
		<-release
		return mcp.NewToolResultText("done"), nil
	}}
	srv, _ := httpTestServer(t, nil, httpSettings{sessionIdle: time.Hour}, slow) // one call at a time
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseAll) // before the server closes, so a failure cannot hang it
	resp, _ := do(t, srv, http.MethodPost, "", "", initializeBody)
	id := resp.Header.Get(server.HeaderKeySessionID)
	other, _ := do(t, srv, http.MethodPost, "", "", initializeBody)
	call := func(sess, n string) <-chan int {
		done := make(chan int, 1)
		go func() {
			resp, _ := do(t, srv, http.MethodPost, "", sess, `{"jsonrpc":"2.0","id":"`+n+`","method":"tools/call","params":{"name":"slow","arguments":{"n":"`+n+`"}}}`)
			done <- resp.StatusCode
		}()
		return done
	}
	first := call(id, "1")
	if got := <-started; got != "1" {
		t.Fatalf("first call started %q", got)
	}
	second := call(id, "2")
	elsewhere := call(other.Header.Get(server.HeaderKeySessionID), "3")
	if got := <-started; got != "3" {
		t.Fatalf("another session's call did not run beside the first: %q started", got)
	}
	select {
	case n := <-started:
		t.Fatalf("call %s of the same session ran beyond its limit of one", n)
	case <-time.After(300 * time.Millisecond):
	}
	release <- struct{}{} // finishes 1 or 3
	release <- struct{}{}
	if got := <-started; got != "2" {
		t.Fatalf("the waiting call did not run next: %q", got)
	}
	releaseAll()
	for _, c := range []<-chan int{first, second, elsewhere} {
		if status := <-c; status != 200 {
			t.Errorf("call answered %d", status)
		}
	}
}
