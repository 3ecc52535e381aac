package httpserve

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Authenticator checks the API key of an HTTP caller (issue: shared cairn
// over the network). The admin area's key store implements it.
type Authenticator interface {
	// Authenticate validates key and counts one request against its rate
	// limits. A refused key is an *errs.Error: ERR_UNAUTHORIZED (401) for
	// a malformed, unknown, revoked or expired key, ERR_RATE_LIMITED (429)
	// with details.retry_after_ms when a limit is exhausted.
	Authenticate(ctx context.Context, key string) (Principal, error)
}

// Principal is an authenticated HTTP caller (docs/decisions.md D22).
type Principal struct {
	UserID string
	KeyID  string
	// Source is how the caller proved who it is: SourceAPIKey or
	// SourceOAuth (the seam.Caller's Source).
	Source string
	// Scopes are the key's scopes: read, write, admin.
	Scopes []string
}

// Sources of an authenticated caller.
const (
	SourceAPIKey = "api_key"
	SourceOAuth  = "oauth"
)

// requireCredential wraps next so that every request carries
// "Authorization: Bearer <credential>": an access token the OAuth gate
// accepts when OAuth is on and the credential is a JWT, else an API key
// auth accepts (docs/decisions.md D44). Its user becomes the caller
// identity of the calls the request makes (D4). auth or gate may be nil.
func requireCredential(auth Authenticator, gate *oauthGate, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			// A CORS preflight never carries credentials; it runs nothing.
			next.ServeHTTP(w, r)
			return
		}
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			w.Header().Set("WWW-Authenticate", gate.challenge(""))
			msg := "this cairn requires an API key: send Authorization: Bearer cairn_… (create one with `cairn admin keys create`)"
			if gate != nil {
				msg = "this cairn requires an OAuth access token or an API key: send Authorization: Bearer <token>; its authorization server is named at " + gate.metadataURL
			}
			writeHTTPError(w, errs.New(401, errs.Unauthorized, msg).With("field", "Authorization"))
			return
		}
		var principal Principal
		var err error
		switch {
		case gate != nil && looksLikeJWT(key):
			principal, err = gate.verifier.verify(r.Context(), key)
		case auth == nil:
			err = invalidToken("this cairn accepts only OAuth access tokens (JWTs) from %s", gate.verifier.issuer)
		default:
			principal, err = auth.Authenticate(r.Context(), key)
			principal.Source = SourceAPIKey
		}
		if err != nil {
			e := errs.From(err)
			if e.Status == 400 {
				// A malformed or oversized credential is one more invalid
				// credential (RFC 6750 §3.1), never a bad request.
				e = errs.New(401, errs.Unauthorized, "the bearer credential is not a valid API key or access token: "+e.Message).With("field", "Authorization")
			}
			switch e.Status {
			case 401:
				w.Header().Set("WWW-Authenticate", gate.challenge(`error="invalid_token"`))
			case 429:
				secs := 1
				// In-process the detail is an int64; from a plugin, a number.
				var ms float64
				switch v := e.Details["retry_after_ms"].(type) {
				case int64:
					ms = float64(v)
				case float64:
					ms = v
				}
				if ms > 0 {
					secs = int(math.Ceil(ms / 1000))
				}
				w.Header().Set("Retry-After", strconv.Itoa(secs))
			}
			writeHTTPError(w, e)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, principal)))
	})
}

// writeHTTPError answers with the D3 error envelope as the HTTP body.
func writeHTTPError(w http.ResponseWriter, e *errs.Error) {
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.Code, "message": e.Message, "details": details}})
}

// principalKey carries an authenticated HTTP caller.
type principalKey struct{}

// PrincipalOf returns the caller whose API key the request in ctx carried.
func PrincipalOf(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
