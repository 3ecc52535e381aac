package httpserve

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A browser page may send requests to any address it likes; what it cannot
// forge is the Origin header. The HTTP transport therefore serves a request
// that carries an Origin only when that origin is the server's own (the
// scheme and Host the request was sent to) or one the operator allowed with
// CAIRN_HTTP_ALLOWED_ORIGINS. Requests without Origin come from programs,
// not pages, and pass. The Host check runs first, so "the server's own"
// cannot be a rebound name on a loopback server.

// originPolicy decides which Origin headers the HTTP transport accepts.
type originPolicy struct {
	// allowed are the operator's extra origins, normalized.
	allowed map[string]bool
}

// newOriginPolicy accepts the server's own origin plus allowed, each a
// normalized origin (see ParseAllowedOrigins).
func newOriginPolicy(allowed []string) originPolicy {
	p := originPolicy{allowed: map[string]bool{}}
	for _, o := range allowed {
		p.allowed[o] = true
	}
	return p
}

// allows reports whether a request to r may come from origin.
func (p originPolicy) allows(origin string, r *http.Request) bool {
	o, err := normalizeOrigin(origin)
	if err != nil {
		return false
	}
	if p.allowed[o] {
		return true
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	own, err := normalizeOrigin(scheme + "://" + r.Host)
	return err == nil && o == own
}

// guardOrigin wraps next with the Host check (a loopback server answers only
// requests addressed to a loopback name: no DNS rebinding) and the Origin
// check. Both refusals are 403 ERR_FORBIDDEN naming the header.
func guardOrigin(p originPolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil &&
			isLoopbackName(local.String()) && !isLoopbackName(r.Host) {
			writeHTTPError(w, errs.Newf(403, errs.Forbidden, "Host %q is not a name of this loopback server; address it as 127.0.0.1, [::1] or localhost", r.Host).
				With("field", "Host").With("required", "a loopback Host"))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !p.allows(origin, r) {
			writeHTTPError(w, errs.Newf(403, errs.Forbidden, "requests from origin %q are not accepted; the operator can allow it with CAIRN_HTTP_ALLOWED_ORIGINS", origin).
				With("field", "Origin").With("required", "an allowed origin"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackName reports whether a host or host:port names a loopback
// interface.
func isLoopbackName(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// normalizeOrigin reduces an origin to scheme://host[:port], lowercased,
// without the scheme's default port. Anything else (a path, credentials,
// "null", another scheme) is an error.
func normalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errs.Newf(400, errs.ConfigInvalid, "origin %q: the scheme must be http or https", s)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", errs.Newf(400, errs.ConfigInvalid, "origin %q: expected scheme://host[:port] and nothing else", s)
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", errs.Newf(400, errs.ConfigInvalid, "origin %q has no host", s)
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}

// ParseAllowedOrigins parses CAIRN_HTTP_ALLOWED_ORIGINS: a comma-separated
// list of origins (scheme://host[:port]) besides the server's own.
func ParseAllowedOrigins(v string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(v, ",") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		o, err := normalizeOrigin(raw)
		if err != nil {
			return nil, errs.Newf(400, errs.ConfigInvalid, "CAIRN_HTTP_ALLOWED_ORIGINS: %q is not an origin (expected scheme://host[:port], for example https://agents.example.com)", strings.TrimSpace(raw)).With("field", "CAIRN_HTTP_ALLOWED_ORIGINS")
		}
		out = append(out, o)
	}
	return out, nil
}
