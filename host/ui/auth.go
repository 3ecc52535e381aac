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

// SessionTTL is how long a login's session secret stays valid.
const SessionTTL = 24 * time.Hour

// tokens holds the one-time login tokens; they live in memory only, so a
// daemon restart voids the unused ones (the sessions survive).
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

// sealSession signs a grant with the data dir's secret: the session secret a
// login hands to the page, which keeps it in its origin's sessionStorage and
// sends it in the Authorization header of every request (docs/security.md,
// "The dashboard's login").
func sealSession(secret []byte, g Grant) string {
	body, _ := json.Marshal(g)
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(mac(secret, enc))
}

func mac(secret []byte, s string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// openSession checks a session secret's signature and expiry.
func openSession(secret []byte, v string, now time.Time) (Grant, bool) {
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

// bearer is the session secret a request carries in its Authorization
// header, or "". Nothing else carries one: no cookie, no query parameter.
func bearer(r *http.Request) string {
	scheme, v, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(v)
}

// hostAllowed reports whether a request's Host names this dashboard: a
// DNS-rebinding page arrives with its own host name and is refused.
func hostAllowed(host string, port string) bool {
	return host == "127.0.0.1:"+port || host == "localhost:"+port
}

// originAllowed reports whether a request may come from where it says: an
// Origin, when present, must be this dashboard's own, exactly (scheme, host
// and port; "null" and every other port are foreign), and a request that
// is not a GET or HEAD must carry one. A browser's Sec-Fetch-Site, when
// present, must say same-origin: a page on another loopback port is
// "same-site", and refused.
func originAllowed(r *http.Request, port string) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	return o == "http://127.0.0.1:"+port || o == "http://localhost:"+port
}
