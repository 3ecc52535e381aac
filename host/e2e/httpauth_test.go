package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// `cairn serve --http` requires an API key of the admin area: the key's user
// is the caller, its rate limits apply, and revoked keys stop at once.

func createKey(t *testing.T, w *workspace, args ...string) (id, plaintext string) {
	t.Helper()
	code, out, stderr := runCairn(t, w, "", nil, append([]string{"admin", "keys", "create", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("admin keys create: %d %s", code, stderr)
	}
	var k struct {
		ID        string `json:"id"`
		Plaintext string `json:"plaintext_key"`
	}
	if err := json.Unmarshal([]byte(out), &k); err != nil || k.Plaintext == "" {
		t.Fatalf("admin keys create output: %v\n%s", err, out)
	}
	return k.ID, k.Plaintext
}

// serveHTTP starts `cairn serve --http 127.0.0.1:0` and returns its URL.
func serveHTTP(t *testing.T, w *workspace, extra ...string) string {
	t.Helper()
	url, stderr := startHTTP(t, w, []string{"CAIRN_PROJECT=web"}, "", extra...)
	if !strings.Contains(stderr.String(), "api_keys_required=true") {
		t.Fatalf("server does not require API keys:\n%s", stderr.String())
	}
	return url
}

// post sends an initialize request with the given Authorization header.
func post(t *testing.T, url, authorization string) (*http.Response, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func TestHTTPRequiresAPIKeys(t *testing.T) {
	w := newWorkspace(t)
	_, good := createKey(t, w, "--name", "agent", "--user", "alice")
	_, limited := createKey(t, w, "--name", "tight", "--user", "bob", "--per-minute", "2")
	revokedID, revoked := createKey(t, w, "--name", "old", "--user", "carol")
	url := serveHTTP(t, w)

	for _, c := range []struct {
		name, auth string
	}{
		{"no key", ""},
		{"not bearer", "Basic " + good},
		{"malformed key", "Bearer cairn_nothex"},
		{"unknown key", "Bearer cairn_" + strings.Repeat("0", 64)},
	} {
		resp, body := post(t, url, c.auth)
		if resp.StatusCode != 401 || errCode(body) != "ERR_UNAUTHORIZED" || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: %d %v %q", c.name, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
		}
	}

	// A good key works, and its user is the caller.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + good}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "http-agent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize with a good key: %v", err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "task_create"
	call.Params.Arguments = map[string]any{"title": "over HTTP", "project": "web"}
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError {
		t.Fatalf("task_create with a good key: %v %+v", err, res)
	}
	var created map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &created)
	if created["created_by"] != "alice" {
		t.Errorf("created_by %v, want the key's user alice", created["created_by"])
	}

	// Over the limit: 429 with Retry-After, on the third request of a
	// two-per-minute key.
	for i := 1; i <= 3; i++ {
		resp, body := post(t, url, "Bearer "+limited)
		if i <= 2 && resp.StatusCode != 200 {
			t.Fatalf("request %d within the limit: %d %v", i, resp.StatusCode, body)
		}
		if i == 3 {
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if resp.StatusCode != 429 || errCode(body) != "ERR_RATE_LIMITED" || err != nil || secs < 1 || secs > 60 {
				t.Fatalf("over the limit: %d %v Retry-After %q", resp.StatusCode, body, resp.Header.Get("Retry-After"))
			}
		}
	}

	// Revocation while the server runs stops the key at once.
	if resp, _ := post(t, url, "Bearer "+revoked); resp.StatusCode != 200 {
		t.Fatalf("key before revocation: %d", resp.StatusCode)
	}
	if code, _, stderr := runCairn(t, w, "", nil, "admin", "keys", "revoke", revokedID); code != 0 {
		t.Fatalf("revoke: %d %s", code, stderr)
	}
	resp, body := post(t, url, "Bearer "+revoked)
	if resp.StatusCode != 401 || !strings.Contains(fmt.Sprint(body), "revoked") {
		t.Fatalf("revoked key: %d %v", resp.StatusCode, body)
	}
}

// Without --no-auth a non-loopback bind is allowed only because keys are
// required; with --no-auth it is refused.
func TestHTTPNoAuthOnlyOnLoopback(t *testing.T) {
	w := newWorkspace(t)
	code, _, errOut := runCairn(t, w, "", nil, "serve", "--http", "0.0.0.0:9", "--no-auth")
	if code != 2 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("--no-auth on 0.0.0.0: %d %s", code, errOut)
	}
}
