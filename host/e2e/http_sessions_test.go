package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// HTTP sessions of `cairn serve --http`: a page of a foreign origin is
// refused, a session belongs to the key that opened it, forged and ended
// ids get 404, DELETE ends a session and idle sessions expire.

type rawReq struct {
	method, key, session, origin, body string
}

func rawMCP(t *testing.T, url string, r rawReq) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(r.method, url, bytes.NewBufferString(r.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	if r.origin != "" {
		req.Header.Set("Origin", r.origin)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if s := strings.TrimSpace(string(b)); strings.HasPrefix(s, "event:") || strings.HasPrefix(s, "data:") {
		// An SSE answer: its data line is the JSON-RPC message.
		for _, line := range strings.Split(s, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				_ = json.Unmarshal([]byte(d), &out)
			}
		}
	} else {
		_ = json.Unmarshal(b, &out)
	}
	return resp, out
}

const (
	initBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	initedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listBody  = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// openSession initializes a session with key and returns its id.
func openSession(t *testing.T, url, key, origin string) string {
	t.Helper()
	resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, origin: origin, body: initBody})
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %d %q %v", resp.StatusCode, id, body)
	}
	if resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, session: id, body: initedMsg}); resp.StatusCode != 202 {
		t.Fatalf("notifications/initialized: %d %v", resp.StatusCode, body)
	}
	return id
}

func detail(body map[string]any, k string) any {
	e, _ := body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d[k]
}

func TestHTTPOriginsAndSessions(t *testing.T) {
	w := newWorkspace(t)
	_, alice := createKey(t, w, "--name", "alice's agent", "--user", "alice")
	_, bob := createKey(t, w, "--name", "bob's agent", "--user", "bob")
	w.env = append(w.env, "CAIRN_HTTP_ALLOWED_ORIGINS=https://agents.example.com")
	url := serveHTTP(t, w)

	// Cross-origin: refused before anything runs, unless allowed.
	resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: alice, origin: "http://evil.example", body: initBody})
	if resp.StatusCode != 403 || errCode(body) != "ERR_FORBIDDEN" || detail(body, "field") != "Origin" || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("foreign origin: %d %v", resp.StatusCode, body)
	}
	resp, body = rawMCP(t, url, rawReq{method: http.MethodPost, origin: "http://evil.example", body: initBody})
	if resp.StatusCode != 403 {
		t.Fatalf("foreign origin without a key: %d %v, want 403 before authentication", resp.StatusCode, body)
	}
	resp, _ = rawMCP(t, url, rawReq{method: http.MethodPost, key: alice, origin: "https://agents.example.com", body: initBody})
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://agents.example.com" {
		t.Fatalf("allowed origin: %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	if resp, _ := rawMCP(t, url, rawReq{method: http.MethodPost, key: alice, origin: strings.TrimSuffix(url, "/mcp"), body: initBody}); resp.StatusCode != 200 {
		t.Fatalf("the server's own origin: %d", resp.StatusCode)
	}

	// A session belongs to the key that opened it.
	s := openSession(t, url, alice, "")
	for _, c := range []struct {
		name   string
		r      rawReq
		status int
	}{
		{"alice in her session", rawReq{method: http.MethodPost, key: alice, session: s, body: listBody}, 200},
		{"bob in alice's session", rawReq{method: http.MethodPost, key: bob, session: s, body: listBody}, 404},
		{"a never-issued id", rawReq{method: http.MethodPost, key: alice, session: "cairn-00000000000000000000000000000000", body: listBody}, 404},
		{"no id after initialize", rawReq{method: http.MethodPost, key: alice, body: listBody}, 400},
		{"bob ends alice's session", rawReq{method: http.MethodDelete, key: bob, session: s}, 404},
		{"bob listens on alice's session", rawReq{method: http.MethodGet, key: bob, session: s}, 404},
		{"alice's session survives bob", rawReq{method: http.MethodPost, key: alice, session: s, body: listBody}, 200},
		{"alice ends it", rawReq{method: http.MethodDelete, key: alice, session: s}, 200},
		{"the ended session", rawReq{method: http.MethodPost, key: alice, session: s, body: listBody}, 404},
		{"ending it again", rawReq{method: http.MethodDelete, key: alice, session: s}, 404},
	} {
		resp, body := rawMCP(t, url, c.r)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d: %v", c.name, resp.StatusCode, c.status, body)
			continue
		}
		if c.status == 200 && c.r.body == listBody {
			res, _ := body["result"].(map[string]any)
			if tools, _ := res["tools"].([]any); len(tools) == 0 {
				t.Errorf("%s: no tools listed: %v", c.name, body)
			}
		}
		if c.status >= 400 && detail(body, "field") != "Mcp-Session-Id" {
			t.Errorf("%s: refusal does not name Mcp-Session-Id: %v", c.name, body)
		}
	}
}

func TestHTTPSessionIdleAndMessageLimit(t *testing.T) {
	w := newWorkspace(t)
	_, key := createKey(t, w, "--name", "agent", "--user", "alice")
	// 3 s: the requests before the pause must each come within the limit
	// on a loaded machine too (docs/decisions.md D42).
	w.env = append(w.env, "CAIRN_HTTP_SESSION_IDLE=3s", "CAIRN_MAX_MESSAGE=4KiB")
	url := serveHTTP(t, w)

	s := openSession(t, url, key, "")
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task_create","arguments":{"title":"` + strings.Repeat("x", 8<<10) + `"}}}`
	resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, session: s, body: big})
	if e, _ := body["error"].(map[string]any); resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(e["message"].(string), "CAIRN_MAX_MESSAGE") {
		t.Fatalf("an 8 KiB message to a 4 KiB limit: %d %v", resp.StatusCode, body)
	}
	if resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, session: s, body: listBody}); resp.StatusCode != 200 {
		t.Fatalf("the session after an oversized message: %d %v", resp.StatusCode, body)
	}
	// The server's real idle limit passes.
	time.Sleep(3500 * time.Millisecond)
	if resp, body := rawMCP(t, url, rawReq{method: http.MethodPost, key: key, session: s, body: listBody}); resp.StatusCode != 404 {
		t.Fatalf("a session idle past CAIRN_HTTP_SESSION_IDLE: %d %v", resp.StatusCode, body)
	}
}

func TestHTTPAllowedOriginsRefusesNonOrigins(t *testing.T) {
	w := newWorkspace(t)
	code, _, stderr := runCairn(t, w, "", []string{"CAIRN_HTTP_ALLOWED_ORIGINS=*"}, "serve", "--http", "127.0.0.1:0", "--no-auth")
	if code == 0 || !strings.Contains(stderr, "CAIRN_HTTP_ALLOWED_ORIGINS") {
		t.Fatalf("CAIRN_HTTP_ALLOWED_ORIGINS=*: exit %d\n%s", code, stderr)
	}
}
