package host

import (
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
}

// loadHTTPSettings reads CAIRN_HTTP_ALLOWED_ORIGINS and
// CAIRN_HTTP_SESSION_IDLE.
func loadHTTPSettings(getenv func(string) string) (httpSettings, error) {
	s := httpSettings{sessionIdle: DefaultHTTPSessionIdle}
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
	return s, nil
}
