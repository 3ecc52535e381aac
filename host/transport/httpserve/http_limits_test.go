package httpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A body that trickles is cut off once CAIRN_HTTP_BODY_TIMEOUT has passed:
// the client hears 408 with a JSON-RPC error and the connection closes.
func TestHTTPBodyThatTricklesIsCutOff(t *testing.T) {
	t.Parallel()
	keys := keyRing{"ka": {UserID: "alice", KeyID: "key_a", Scopes: []string{"read"}}}
	srv, _ := httpTestServer(t, keys, httpSettings{sessionIdle: time.Hour, bodyTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // only against a hang
	body := initializeBody
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer ka\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(srv.URL, "http://"), len(body), body[:10])
	// The rest never comes: the server must end the wait itself.
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a trickling body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	var msg mcp.JSONRPCError
	if resp.StatusCode != http.StatusRequestTimeout || json.Unmarshal(b, &msg) != nil || msg.Error.Code != mcp.INVALID_REQUEST ||
		!strings.Contains(msg.Error.Message, "CAIRN_HTTP_BODY_TIMEOUT") {
		t.Fatalf("trickling body: %d %s, want 408 and a JSON-RPC error naming CAIRN_HTTP_BODY_TIMEOUT", resp.StatusCode, b)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("the connection stayed open after the cut: %v", err)
	}
}

// One key has at most CAIRN_HTTP_MAX_CONNS_PER_KEY requests open: the next
// is refused at once with 429 naming the limit, another key is not
// affected, and the limit frees as requests end.
func TestHTTPRequestsPerKeyAreLimited(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	hold := server.ServerTool{Tool: mcp.NewTool("hold"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-release
		return mcp.NewToolResultText("done"), nil
	}}
	keys := keyRing{"ka": {UserID: "alice", KeyID: "key_a"}, "kb": {UserID: "bob", KeyID: "key_b"}}
	srv, _ := httpTestServer(t, keys, httpSettings{sessionIdle: time.Hour, maxPerKey: 2}, hold)
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	t.Cleanup(releaseAll)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{}}}`
	// Two sessions, one call each (a session runs one call at a time here).
	var sessions []string
	for i := 0; i < 2; i++ {
		resp, body := do(t, srv, http.MethodPost, "ka", "", initializeBody)
		if resp.StatusCode != 200 {
			t.Fatalf("initialize: %d %s", resp.StatusCode, body)
		}
		sessions = append(sessions, resp.Header.Get(server.HeaderKeySessionID))
	}
	done := make(chan int, 2)
	for _, id := range sessions {
		go func() {
			resp, _ := do(t, srv, http.MethodPost, "ka", id, call)
			done <- resp.StatusCode
		}()
		<-started
	}
	resp, body := do(t, srv, http.MethodPost, "ka", sessions[0], `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var msg mcp.JSONRPCError
	if resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal([]byte(body), &msg) != nil ||
		!strings.Contains(msg.Error.Message, "CAIRN_HTTP_MAX_CONNS_PER_KEY") || !strings.Contains(msg.Error.Message, "2") {
		t.Fatalf("third request of a key with 2 open: %d %s, want 429 naming the limit", resp.StatusCode, body)
	}
	if resp, body := do(t, srv, http.MethodPost, "kb", "", initializeBody); resp.StatusCode != 200 {
		t.Fatalf("another key was refused: %d %s", resp.StatusCode, body)
	}
	releaseAll()
	for i := 0; i < 2; i++ {
		if status := <-done; status != 200 {
			t.Errorf("held call answered %d", status)
		}
	}
	if resp, body := do(t, srv, http.MethodPost, "ka", sessions[0], `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 200 {
		t.Fatalf("after the held requests ended: %d %s, want 200", resp.StatusCode, body)
	}
}
