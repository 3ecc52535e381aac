package httpserve

import (
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// httpSettings are the HTTP transport's own settings.
type httpSettings struct {
	// allowedOrigins are origins besides the server's own whose pages may
	// call it (CAIRN_HTTP_ALLOWED_ORIGINS), normalized.
	allowedOrigins []string
	// sessionIdle ends a session after this long without a request
	// (CAIRN_HTTP_SESSION_IDLE).
	sessionIdle time.Duration
	// bodyTimeout bounds the reading of a request body
	// (CAIRN_HTTP_BODY_TIMEOUT).
	bodyTimeout time.Duration
	// maxPerKey bounds the requests one API key has open at once
	// (CAIRN_HTTP_MAX_CONNS_PER_KEY).
	maxPerKey int
	// oauth is the listener's OAuth gate (CAIRN_OAUTH_*); nil: off.
	oauth *oauthGate
}

// Defaults of the HTTP transport's bounds (docs/decisions.md D33).
const (
	DefaultHTTPBodyTimeout = 30 * time.Second
	DefaultHTTPMaxPerKey   = 16
	httpHeaderTimeout      = 10 * time.Second
	httpIdleTimeout        = 2 * time.Minute
)

// loadHTTPSettings reads CAIRN_HTTP_ALLOWED_ORIGINS,
// CAIRN_HTTP_SESSION_IDLE, CAIRN_HTTP_BODY_TIMEOUT and
// CAIRN_HTTP_MAX_CONNS_PER_KEY.
func loadHTTPSettings(getenv func(string) string) (httpSettings, error) {
	s := httpSettings{sessionIdle: DefaultHTTPSessionIdle, bodyTimeout: DefaultHTTPBodyTimeout, maxPerKey: DefaultHTTPMaxPerKey}
	origins, err := ParseAllowedOrigins(getenv("CAIRN_HTTP_ALLOWED_ORIGINS"))
	if err != nil {
		return s, err
	}
	s.allowedOrigins = origins
	if v := strings.TrimSpace(getenv("CAIRN_HTTP_SESSION_IDLE")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 7*24*time.Hour {
			return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_HTTP_SESSION_IDLE %q is not a duration from 1s to 168h (examples: 30m, 2h)", v).With("field", "CAIRN_HTTP_SESSION_IDLE")
		}
		s.sessionIdle = d
	}
	if v := strings.TrimSpace(getenv("CAIRN_HTTP_BODY_TIMEOUT")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Millisecond || d > time.Hour {
			return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_HTTP_BODY_TIMEOUT %q is not a duration from 10ms to 1h (examples: 30s, 2m)", v).With("field", "CAIRN_HTTP_BODY_TIMEOUT")
		}
		s.bodyTimeout = d
	}
	if v := strings.TrimSpace(getenv("CAIRN_HTTP_MAX_CONNS_PER_KEY")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100000 {
			return s, errs.Newf(400, errs.ConfigInvalid, "CAIRN_HTTP_MAX_CONNS_PER_KEY %q is not a whole number from 1 to 100000", v).With("field", "CAIRN_HTTP_MAX_CONNS_PER_KEY")
		}
		s.maxPerKey = n
	}
	return s, nil
}
