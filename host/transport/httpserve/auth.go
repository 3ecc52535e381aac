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
	// Scopes are the key's scopes: read, write, admin.
	Scopes []string
}

// requireAPIKey wraps next so that every request carries
// "Authorization: Bearer <key>" that auth accepts; the key's user becomes
// the caller identity of the calls the request makes (D4).
func requireAPIKey(auth Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			// A CORS preflight never carries credentials; it runs nothing.
			next.ServeHTTP(w, r)
			return
		}
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
			writeHTTPError(w, errs.New(401, errs.Unauthorized, "this cairn requires an API key: send Authorization: Bearer cairn_… (create one with `cairn admin keys create`)"))
			return
		}
		principal, err := auth.Authenticate(r.Context(), key)
		if err != nil {
			e := errs.From(err)
			switch e.Status {
			case 401:
				w.Header().Set("WWW-Authenticate", `Bearer realm="cairn", error="invalid_token"`)
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
