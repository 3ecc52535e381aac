package httpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Bounds of offline token checks (docs/decisions.md D44).
const (
	// jwksLifetime is how long fetched keys are trusted: a key the
	// authorization server removes (rotated out, revoked) stops verifying
	// tokens at most this long after.
	jwksLifetime = 10 * time.Minute
	// jwksRefetchGap rate-limits fetches that an unknown kid triggers, so
	// tokens with made-up kids cannot make cairn hammer the issuer.
	jwksRefetchGap = 30 * time.Second
	// tokenSkew is the clock skew allowed on exp, nbf and iat.
	tokenSkew = 60 * time.Second
	// maxJWKSBytes bounds the metadata and key set read from the issuer.
	maxJWKSBytes = 1 << 20
	// maxTokenBytes bounds a bearer credential; longer is refused unread.
	maxTokenBytes = 16 << 10
)

// tokenAlgorithms are the signature algorithms accepted: asymmetric only,
// never none and never HMAC (a public key must not double as a secret).
var tokenAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// tokenVerifier checks JWT access tokens of one issuer offline, against
// the issuer's JWKS.
type tokenVerifier struct {
	issuer, resource string
	client           *http.Client
	now              func() time.Time

	mu        sync.Mutex
	jwksURI   string
	keys      *jose.JSONWebKeySet
	fetchedAt time.Time
	triedAt   time.Time
}

func newTokenVerifier(o oauthSettings) *tokenVerifier {
	return &tokenVerifier{issuer: o.issuer, resource: o.resource, client: &http.Client{Timeout: 10 * time.Second}, now: time.Now}
}

// looksLikeJWT tells a token from an API key: a JWS compact serialization
// is three base64url parts joined by dots, which no cairn key contains
// (docs/decisions.md D44).
func looksLikeJWT(credential string) bool {
	return strings.Count(credential, ".") == 2 && strings.HasPrefix(credential, "eyJ")
}

// tokenClaims are the claims cairn reads of an access token.
type tokenClaims struct {
	jwt.Claims
	Scope string   `json:"scope"`
	Scp   []string `json:"scp"`
}

// verify checks token and returns its caller.
func (v *tokenVerifier) verify(ctx context.Context, token string) (Principal, error) {
	if len(token) > maxTokenBytes {
		return Principal{}, invalidToken("the access token is longer than %d bytes", maxTokenBytes)
	}
	tok, err := jwt.ParseSigned(token, tokenAlgorithms)
	if err != nil {
		return Principal{}, invalidToken("the access token is not a JWT signed with an accepted algorithm (%v)", err)
	}
	kid := tok.Headers[0].KeyID
	key, err := v.key(ctx, kid)
	if err != nil {
		return Principal{}, err
	}
	var c tokenClaims
	if err := tok.Claims(key.Key, &c); err != nil {
		return Principal{}, invalidToken("the access token's signature does not verify with the issuer's key %q", kid)
	}
	if c.Expiry == nil {
		return Principal{}, invalidToken("the access token has no exp")
	}
	if c.Subject == "" {
		return Principal{}, invalidToken("the access token has no sub")
	}
	exp := jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience{v.resource}, Time: v.now()}
	if err := c.ValidateWithLeeway(exp, tokenSkew); err != nil {
		return Principal{}, invalidToken("the access token is refused: %v (issuer %s, audience %s)", err, v.issuer, v.resource)
	}
	return Principal{UserID: subjectUser(v.issuer, c.Subject), Source: SourceOAuth, Scopes: mapTokenScopes(c.Scope, c.Scp)}, nil
}

// key returns the issuer's key named kid, fetching the key set when it is
// stale or lacks kid (at most once per jwksRefetchGap).
func (v *tokenVerifier) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	fresh := v.keys != nil && now.Sub(v.fetchedAt) < jwksLifetime
	if k, ok := v.pick(kid); ok && fresh {
		return k, nil
	}
	if !v.triedAt.IsZero() && now.Sub(v.triedAt) < jwksRefetchGap {
		if !fresh {
			return jose.JSONWebKey{}, errs.Newf(503, errs.Unavailable, "the signing keys of %s could not be read lately; try again shortly", v.issuer)
		}
		return jose.JSONWebKey{}, invalidToken("the issuer %s has no key %q", v.issuer, kid)
	}
	v.triedAt = now
	if err := v.fetch(ctx); err != nil {
		if !fresh {
			v.keys = nil
		}
		return jose.JSONWebKey{}, err
	}
	v.fetchedAt = now
	if k, ok := v.pick(kid); ok {
		return k, nil
	}
	return jose.JSONWebKey{}, invalidToken("the issuer %s has no key %q", v.issuer, kid)
}

// pick finds kid in the cached set; a token without kid may use the only
// signing key.
func (v *tokenVerifier) pick(kid string) (jose.JSONWebKey, bool) {
	if v.keys == nil {
		return jose.JSONWebKey{}, false
	}
	if kid == "" {
		if len(v.keys.Keys) == 1 {
			return v.keys.Keys[0], true
		}
		return jose.JSONWebKey{}, false
	}
	ks := v.keys.Key(kid)
	for _, k := range ks {
		if k.Use == "" || k.Use == "sig" {
			return k, true
		}
	}
	return jose.JSONWebKey{}, false
}

// fetch reads the issuer's metadata (once) and its key set.
func (v *tokenVerifier) fetch(ctx context.Context) error {
	if v.jwksURI == "" {
		uri, err := v.discover(ctx)
		if err != nil {
			return err
		}
		v.jwksURI = uri
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, v.jwksURI, &set); err != nil {
		return errs.Newf(503, errs.Unavailable, "cannot read the signing keys of %s from %s: %v", v.issuer, v.jwksURI, err).With("field", "jwks_uri")
	}
	v.keys = &set
	return nil
}

// discover finds the issuer's jwks_uri in its RFC 8414 metadata, else its
// OpenID Connect discovery document; the metadata must name the issuer.
func (v *tokenVerifier) discover(ctx context.Context) (string, error) {
	var last error
	for _, u := range metadataURLs(v.issuer) {
		var md struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, u, &md); err != nil {
			last = err
			continue
		}
		if md.Issuer != v.issuer {
			return "", errs.Newf(503, errs.Unavailable, "the metadata at %s names issuer %q, not CAIRN_OAUTH_ISSUER %q", u, md.Issuer, v.issuer).With("field", "CAIRN_OAUTH_ISSUER")
		}
		if md.JWKSURI == "" {
			return "", errs.Newf(503, errs.Unavailable, "the metadata at %s has no jwks_uri: cairn verifies JWT access tokens offline", u).With("field", "jwks_uri")
		}
		return md.JWKSURI, nil
	}
	return "", errs.Newf(503, errs.Unavailable, "cannot read the metadata of CAIRN_OAUTH_ISSUER %s: %v", v.issuer, last).With("field", "CAIRN_OAUTH_ISSUER")
}

// metadataURLs are where RFC 8414 and OpenID Connect Discovery put an
// issuer's metadata (a path in the issuer goes after the well-known part
// for RFC 8414, after the issuer for OpenID).
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}

func (v *tokenVerifier) getJSON(ctx context.Context, u string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return err
	}
	if len(b) > maxJWKSBytes {
		return fmt.Errorf("GET %s: more than %d bytes", u, maxJWKSBytes)
	}
	return json.Unmarshal(b, into)
}

// invalidToken is the 401 of a token cairn does not accept.
func invalidToken(format string, args ...any) error {
	return errs.Newf(401, errs.Unauthorized, format, args...).With("field", "Authorization")
}

// subjectUser is the cairn user of a token: its subject, qualified by
// the issuer's host so that no issuer's subject can pass for an API key's
// user or another issuer's (docs/decisions.md D35; docs/decisions.md D44).
func subjectUser(issuer, sub string) string {
	host := issuer
	if u, err := url.Parse(issuer); err == nil && u.Host != "" {
		host = u.Host + strings.TrimSuffix(u.Path, "/")
	}
	return "oauth:" + sub + "@" + host
}

// mapTokenScopes maps a token's scopes to cairn's (docs/decisions.md D22;
// docs/decisions.md D44): cairn:read or read is read, cairn:write or
// write is write, cairn:admin or admin is admin; others are ignored. As
// for keys, each scope stands alone: write does not imply read.
func mapTokenScopes(scope string, scp []string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimPrefix(s, "cairn:")
		switch s {
		case "read", "write", "admin":
			for _, have := range out {
				if have == s {
					return
				}
			}
			out = append(out, s)
		}
	}
	for _, s := range strings.Fields(scope) {
		add(s)
	}
	for _, s := range scp {
		add(s)
	}
	return out
}

// TokenScopes are the scopes the protected resource metadata advertises.
var TokenScopes = []string{"cairn:read", "cairn:write", "cairn:admin"}
