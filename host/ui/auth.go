package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Grant is what a login gives a browser: who acts (a person is a principal
// too, docs/decisions.md D22), whether actions are on, and the landing project.
type Grant struct {
	Person       string `json:"p"`
	AllowActions bool   `json:"a,omitempty"`
	Project      string `json:"j,omitempty"`
	Expires      int64  `json:"e"`
}

// TokenTTL bounds how long a printed login URL works; it works once.
const TokenTTL = 10 * time.Minute

// SessionTTL is how long a login cookie stays valid.
const SessionTTL = 24 * time.Hour

// tokens holds the one-time login tokens; they live in memory only, so a
// daemon restart voids the unused ones (the cookies survive).
type tokens struct {
	mu sync.Mutex
	m  map[string]Grant
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (t *tokens) issue(g Grant, now time.Time) string {
	tok := randomHex(24)
	g.Expires = now.Add(TokenTTL).Unix()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]Grant{}
	}
	for k, v := range t.m { // drop the expired ones as we go
		if now.Unix() > v.Expires {
			delete(t.m, k)
		}
	}
	t.m[tok] = g
	return tok
}

// redeem consumes a token: a second use fails.
func (t *tokens) redeem(tok string, now time.Time) (Grant, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, ok := t.m[tok]
	delete(t.m, tok)
	if !ok || now.Unix() > g.Expires {
		return Grant{}, false
	}
	return g, true
}

// sealCookie signs a grant with the data dir's secret.
func sealCookie(secret []byte, g Grant) string {
	body, _ := json.Marshal(g)
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(mac(secret, enc))
}

func mac(secret []byte, s string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// openCookie checks a cookie's signature and expiry.
func openCookie(secret []byte, v string, now time.Time) (Grant, bool) {
	enc, sig, ok := strings.Cut(v, ".")
	if !ok {
		return Grant{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(secret, enc)) {
		return Grant{}, false
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return Grant{}, false
	}
	var g Grant
	if json.Unmarshal(body, &g) != nil || g.Person == "" || now.Unix() > g.Expires {
		return Grant{}, false
	}
	return g, true
}

// hostAllowed reports whether a request's Host names this dashboard: a
// DNS-rebinding page arrives with its own host name and is refused.
func hostAllowed(host string, port string) bool {
	return host == "127.0.0.1:"+port || host == "localhost:"+port
}

// originAllowed checks the Origin header: absent is fine for a read (a
// top-level navigation may omit it), but a write must come from this
// dashboard's own pages.
func originAllowed(r *http.Request, port string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	return o == "http://127.0.0.1:"+port || o == "http://localhost:"+port
}
