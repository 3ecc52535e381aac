package httpserve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// testIssuer is an authorization server's discovery and key set: its
// RFC 8414 metadata and JWKS, with keys the test rotates.
type testIssuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    map[string]*ecdsa.PrivateKey
	fetches atomic.Int32
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	is := &testIssuer{keys: map[string]*ecdsa.PrivateKey{}}
	is.addKey(t, "k1")
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		var set jose.JSONWebKeySet
		for kid, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"})
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) addKey(t *testing.T, kid string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.keys[kid] = k
	is.mu.Unlock()
}

// mint signs claims with the issuer's key kid (ES256).
func (is *testIssuer) mint(t *testing.T, kid string, claims map[string]any) string {
	t.Helper()
	is.mu.Lock()
	k := is.keys[kid]
	is.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k, KeyID: kid}}, (&jose.SignerOptions{}).WithType("at+jwt"))
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

const testResource = "http://127.0.0.1:1/mcp"

func (is *testIssuer) claims(scope string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.srv.URL, "sub": "alice", "aud": testResource, "exp": now.Add(time.Hour).Unix(),
		"iat": now.Unix(), "scope": scope}
}

func TestLoadOAuthSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		issuer, resource, field string
		want                    oauthSettings
	}{
		{},
		{issuer: "https://id.example.com", want: oauthSettings{issuer: "https://id.example.com", resource: "http://127.0.0.1:8765/mcp"}},
		{issuer: "http://127.0.0.1:9000/", resource: "https://cairn.example.com/mcp",
			want: oauthSettings{issuer: "http://127.0.0.1:9000/", resource: "https://cairn.example.com/mcp"}},
		{issuer: "http://localhost:9000", want: oauthSettings{issuer: "http://localhost:9000", resource: "http://127.0.0.1:8765/mcp"}},
		{issuer: "http://id.example.com", field: "CAIRN_OAUTH_ISSUER"},
		{issuer: "id.example.com", field: "CAIRN_OAUTH_ISSUER"},
		{issuer: "https://id.example.com", resource: "http://cairn.example.com/mcp", field: "CAIRN_OAUTH_RESOURCE"},
		{resource: "https://cairn.example.com/mcp", field: "CAIRN_OAUTH_RESOURCE"},
	} {
		env := map[string]string{"CAIRN_OAUTH_ISSUER": tc.issuer, "CAIRN_OAUTH_RESOURCE": tc.resource}
		got, err := loadOAuthSettings(func(k string) string { return env[k] }, "http://127.0.0.1:8765/mcp")
		if tc.field != "" {
			if e := errs.From(err); err == nil || e.Code != errs.ConfigInvalid || e.Details["field"] != tc.field {
				t.Errorf("issuer %q resource %q: %v, want a config error naming %s", tc.issuer, tc.resource, err, tc.field)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("issuer %q resource %q: %+v %v, want %+v", tc.issuer, tc.resource, got, err, tc.want)
		}
	}
}

func TestMapTokenScopes(t *testing.T) {
	t.Parallel()
	got := mapTokenScopes("openid cairn:read write offline_access cairn:read", []string{"cairn:admin"})
	if strings.Join(got, ",") != "read,write,admin" {
		t.Fatalf("scopes %v, want read,write,admin", got)
	}
	if got := mapTokenScopes("profile", nil); len(got) != 0 {
		t.Fatalf("scopes %v, want none", got)
	}
}

func TestTokenVerifierRefusals(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	other := newTestIssuer(t)
	v := newTokenVerifier(oauthSettings{issuer: is.srv.URL, resource: testResource})
	good := is.mint(t, "k1", is.claims("cairn:read cairn:write"))
	p, err := v.verify(context.Background(), good)
	if err != nil {
		t.Fatalf("a good token: %v", err)
	}
	if p.Source != SourceOAuth || !strings.HasPrefix(p.UserID, "oauth:alice@127.0.0.1:") || strings.Join(p.Scopes, ",") != "read,write" {
		t.Fatalf("principal %+v", p)
	}
	with := func(change func(map[string]any)) string {
		c := is.claims("cairn:read")
		change(c)
		return is.mint(t, "k1", c)
	}
	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	sig[5] ^= 1
	tampered := parts[0] + "." + parts[1] + "." + string(sig)
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1"}`)) + "." + parts[1] + "."
	hs := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"k1"}`)) + "." + parts[1] + "." + parts[2]
	for name, tok := range map[string]string{
		"wrong audience":   with(func(c map[string]any) { c["aud"] = "https://elsewhere.example.com/mcp" }),
		"expired":          with(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }),
		"not yet valid":    with(func(c map[string]any) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() }),
		"no exp":           with(func(c map[string]any) { delete(c, "exp") }),
		"no sub":           with(func(c map[string]any) { delete(c, "sub") }),
		"another issuer":   other.mint(t, "k1", other.claims("cairn:read")),
		"issuer claimed":   with(func(c map[string]any) { c["iss"] = other.srv.URL }),
		"tampered":         tampered,
		"alg none":         none,
		"alg HS256":        hs,
		"oversized":        good + strings.Repeat("A", maxTokenBytes),
		"not a JWT at all": "eyJ.x.y",
	} {
		_, err := v.verify(context.Background(), tok)
		if e := errs.From(err); err == nil || e.Status != 401 {
			t.Errorf("%s: %v, want 401", name, err)
		}
	}
	// Within the skew, an expired token still passes.
	if _, err := v.verify(context.Background(), with(func(c map[string]any) { c["exp"] = time.Now().Add(-30 * time.Second).Unix() })); err != nil {
		t.Errorf("expired 30 s ago (skew 60 s): %v", err)
	}
}

func TestTokenVerifierFollowsKeyRotation(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	v := newTokenVerifier(oauthSettings{issuer: is.srv.URL, resource: testResource})
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	v.now = func() time.Time { return time.Unix(0, clock.Load()) }
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	if _, err := v.verify(context.Background(), is.mint(t, "k1", is.claims("cairn:read"))); err != nil {
		t.Fatal(err)
	}
	// A new key: its first token fetches the set again.
	is.addKey(t, "k2")
	advance(jwksRefetchGap)
	if _, err := v.verify(context.Background(), is.mint(t, "k2", is.claims("cairn:read"))); err != nil {
		t.Fatalf("token of a rotated-in key: %v", err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d key set fetches, want 2", n)
	}
	// Made-up kids do not make cairn fetch again within the gap.
	for i := 0; i < 5; i++ {
		tok := is.mint(t, "k1", is.claims("cairn:read"))
		h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"nope"}`))
		tok = h + tok[strings.Index(tok, "."):]
		if _, err := v.verify(context.Background(), tok); errs.From(err).Status != 401 {
			t.Fatalf("unknown kid: %v, want 401", err)
		}
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d key set fetches after unknown kids, want 2 (rate-limited)", n)
	}
	// A key removed at the issuer stops verifying once the cache ends.
	tok := is.mint(t, "k1", is.claims("cairn:read"))
	is.mu.Lock()
	delete(is.keys, "k1")
	is.mu.Unlock()
	if _, err := v.verify(context.Background(), tok); err != nil {
		t.Fatalf("within the cache's lifetime: %v", err)
	}
	advance(jwksLifetime)
	if _, err := v.verify(context.Background(), tok); errs.From(err).Status != 401 {
		t.Fatalf("a removed key after the cache's lifetime: %v, want 401", err)
	}
}

func TestTokenVerifierWithoutItsIssuer(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	tok := is.mint(t, "k1", is.claims("cairn:read"))
	// Metadata naming another issuer is not trusted.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	}))
	defer liar.Close()
	for name, issuer := range map[string]string{"metadata of another issuer": liar.URL, "issuer down": "http://127.0.0.1:1"} {
		v := newTokenVerifier(oauthSettings{issuer: issuer, resource: testResource})
		if _, err := v.verify(context.Background(), tok); errs.From(err).Status != 503 || errs.From(err).Code != errs.Unavailable {
			t.Errorf("%s: %v, want 503 %s", name, err, errs.Unavailable)
		}
	}
}

// oauthTestServer is httpTestServer with OAuth on for issuer and a
// write tool, task_create, that needs the write scope.
func oauthTestServer(t *testing.T, is *testIssuer, auth Authenticator) *httptest.Server {
	t.Helper()
	write := server.ServerTool{Tool: mcp.NewTool("task_create"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("created"), nil
	}}
	gate := newOAuthGate(oauthSettings{issuer: is.srv.URL, resource: testResource})
	srv, _ := httpTestServer(t, auth, httpSettings{sessionIdle: time.Hour, oauth: gate}, write)
	return srv
}

func TestOAuthOverHTTP(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	keys := keyRing{"cairn_good": {UserID: "bob", KeyID: "key_b", Scopes: []string{"read"}}}
	srv := oauthTestServer(t, is, longKeyRefused{keys})
	const prm = `resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"`

	resp, body := do(t, srv, http.MethodPost, "", "", initializeBody)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != "Bearer "+prm {
		t.Fatalf("no credential: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	for name, cred := range map[string]string{
		"expired token": is.mint(t, "k1", func() map[string]any {
			c := is.claims("cairn:read")
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return c
		}()),
		"unknown key":   "cairn_nope",
		"oversized key": "cairn_" + strings.Repeat("x", 300),
	} {
		resp, body := do(t, srv, http.MethodPost, cred, "", initializeBody)
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer error="invalid_token", `+prm {
			t.Errorf("%s: %d %q %s, want 401 invalid_token", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	// API keys keep working beside tokens.
	if resp, body := do(t, srv, http.MethodPost, "cairn_good", "", initializeBody); resp.StatusCode != 200 {
		t.Fatalf("API key beside OAuth: %d %s", resp.StatusCode, body)
	}
	reader := is.mint(t, "k1", is.claims("cairn:read"))
	resp, body = do(t, srv, http.MethodPost, reader, "", initializeBody)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize with a token: %d %s", resp.StatusCode, body)
	}
	session := resp.Header.Get(server.HeaderKeySessionID)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"task_create","arguments":{}}}`
	resp, body = do(t, srv, http.MethodPost, reader, session, call)
	if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != `Bearer error="insufficient_scope", scope="cairn:write", `+prm {
		t.Fatalf("read token calling a write tool: %d %q %s, want 403 insufficient_scope", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	writer := is.mint(t, "k1", is.claims("cairn:read cairn:write"))
	resp, body = do(t, srv, http.MethodPost, writer, "", initializeBody)
	if resp.StatusCode != 200 {
		t.Fatalf("initialize with a write token: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, srv, http.MethodPost, writer, resp.Header.Get(server.HeaderKeySessionID), call)
	if resp.StatusCode != 200 || !strings.Contains(body, "created") {
		t.Fatalf("write token calling a write tool: %d %s", resp.StatusCode, body)
	}
}

// longKeyRefused refuses an overlong key as the admin area's key tool
// does: a 400 on the key's length.
type longKeyRefused struct{ keyRing }

func (k longKeyRefused) Authenticate(ctx context.Context, key string) (Principal, error) {
	if len(key) > 200 {
		return Principal{}, errs.New(400, errs.InvalidInput, "key must be at most 200 characters").With("field", "key")
	}
	return k.keyRing.Authenticate(ctx, key)
}

func TestProtectedResourceMetadata(t *testing.T) {
	t.Parallel()
	g := newOAuthGate(oauthSettings{issuer: "https://id.example.com", resource: "https://cairn.example.com/mcp"})
	if g.metadataURL != "https://cairn.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("metadata URL %s", g.metadataURL)
	}
	rec := httptest.NewRecorder()
	g.serveMetadata(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	var md struct {
		Resource      string   `json:"resource"`
		Servers       []string `json:"authorization_servers"`
		Scopes        []string `json:"scopes_supported"`
		BearerMethods []string `json:"bearer_methods_supported"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s %v", rec.Code, rec.Body, err)
	}
	if md.Resource != "https://cairn.example.com/mcp" || strings.Join(md.Servers, ",") != "https://id.example.com" ||
		strings.Join(md.Scopes, ",") != "cairn:read,cairn:write,cairn:admin" || strings.Join(md.BearerMethods, ",") != "header" {
		t.Fatalf("metadata %+v", md)
	}
}
