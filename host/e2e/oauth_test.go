package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// oidcProviderPackage is the authorization server the OAuth test runs:
// panva's certified OpenID provider, configured by testdata/oauth-as.mjs.
const oidcProviderPackage = "oidc-provider@9.13.3"

// authServer is oauth-as.mjs running: its issuer URL and signing key.
type authServer struct {
	Issuer string          `json:"issuer"`
	JWK    jose.JSONWebKey `json:"jwk"`
}

// startAuthServer runs testdata/oauth-as.mjs with ts's Node until the
// test ends.
func startAuthServer(t *testing.T, ts *tsClient) *authServer {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "oauth-as.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(ts.dir, "oauth-as.mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ts.node, script)
	cmd.Dir = ts.dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("authorization server stderr:\n%s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var as authServer
	select {
	case line := <-lines:
		if err := json.Unmarshal([]byte(line), &as); err != nil || as.Issuer == "" {
			t.Fatalf("authorization server said %q: %v\n%s", line, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the authorization server did not start\n%s", stderr.String())
	}
	return &as
}

// token asks the authorization server for a client_credentials access
// token for resource.
func (as *authServer) token(t *testing.T, clientID, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}
	req, _ := http.NewRequest(http.MethodPost, as.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s: %d %s", clientID, resp.StatusCode, b)
	}
	return tok.AccessToken
}

// signJWT signs claims with key (ES256).
func signJWT(t *testing.T, key jose.JSONWebKey, claims map[string]any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := sig.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOAuthWithARealAuthorizationServer puts cairn behind oidc-provider:
// the official TypeScript client discovers cairn's protected resource
// metadata, gets a token and calls a tool as its subject; then each token
// the specification says to refuse is refused with its status and header.
func TestOAuthWithARealAuthorizationServer(t *testing.T) {
	ts := installTSClient(t, oidcProviderPackage)
	as := startAuthServer(t, ts)
	w := newWorkspace(t)
	mcpURL, _ := startHTTP(t, w, []string{"CAIRN_OAUTH_ISSUER=" + as.Issuer}, "")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	prm := `resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp"`

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var md struct {
			Resource string   `json:"resource"`
			Servers  []string `json:"authorization_servers"`
			Bearer   []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || md.Resource != mcpURL || len(md.Servers) != 1 || md.Servers[0] != as.Issuer ||
			strings.Join(md.Bearer, ",") != "header" {
			t.Fatalf("GET %s: %d %+v %v", path, resp.StatusCode, md, err)
		}
	}

	got := ts.run(t, w, nil, "ts-oauth.mjs", mcpURL, "cairn-writer", "s3cret", "cairn:read cairn:write")
	created, _ := got["created"].(map[string]any)
	host := strings.TrimPrefix(as.Issuer, "http://")
	if created["created_by"] != "oauth:cairn-writer@"+host {
		t.Fatalf("task_create by the TypeScript client answered %v; want created_by oauth:cairn-writer@%s", got["created"], host)
	}
	good, _ := got["token"].(string)
	if strings.Count(good, ".") != 2 {
		t.Fatalf("the client's token %q is not a JWT", good)
	}

	post := func(token, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	if resp, body := post("", initialize); resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != "Bearer "+prm {
		t.Fatalf("no token: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}

	parts := strings.Split(good, ".")
	var claims map[string]any
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	with := func(change map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range claims {
			c[k] = v
		}
		for k, v := range change {
			c[k] = v
		}
		return c
	}
	sig := []byte(parts[2])
	sig[3] ^= 1
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{
		"wrong audience":     as.token(t, "cairn-writer", "cairn:read", "https://elsewhere.example.com/mcp"),
		"expired":            signJWT(t, as.JWK, with(map[string]any{"exp": time.Now().Add(-10 * time.Minute).Unix(), "iat": time.Now().Add(-20 * time.Minute).Unix()})),
		"tampered signature": parts[0] + "." + parts[1] + "." + string(sig),
		"alg none":           base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + parts[1] + ".",
		"another issuer": signJWT(t, jose.JSONWebKey{Key: other, KeyID: "as-key-1"},
			with(map[string]any{"iss": "http://127.0.0.1:1"})),
		// The admin area's key tool refuses a key over 200 characters as
		// bad input; over HTTP it is one more invalid credential.
		"oversized API key": "cairn_" + strings.Repeat("x", 300),
		"oversized token":   good + strings.Repeat("A", 20000),
	}
	for name, tok := range refused {
		resp, body := post(tok, initialize)
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token", `+prm {
			t.Errorf("%s: %d %q %s; want 401 invalid_token naming the metadata", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		} else {
			t.Logf("%s: %d %s", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}

	reader := as.token(t, "cairn-reader", "cairn:read", mcpURL)
	resp, body := post(reader, initialize)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize with a read token: %d %s", resp.StatusCode, body)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_create","arguments":{"title":"not allowed"}}}`
	resp, body = post(reader, call)
	want := `Bearer error="insufficient_scope", scope="cairn:write", ` + prm
	if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("read token calling task_create: %d %q %s; want 403 %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, want)
	}
	t.Logf("read scope calling a write tool: %d %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
}

// TestOAuthOffAdvertisesNothing: without CAIRN_OAUTH_ISSUER no protected
// resource metadata is served and the challenge names no metadata, so
// clients that would drop their configured key header keep it.
func TestOAuthOffAdvertisesNothing(t *testing.T) {
	w := newWorkspace(t)
	mcpURL, _ := startHTTP(t, w, nil, "")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("GET %s without an issuer: %d, want 404", path, resp.StatusCode)
		}
	}
	resp, err := http.Post(mcpURL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || got != `Bearer realm="cairn"` {
		t.Errorf("no key without an issuer: %d %q, want 401 Bearer realm=\"cairn\"", resp.StatusCode, got)
	}
}
