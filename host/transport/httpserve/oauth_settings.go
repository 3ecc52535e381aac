package httpserve

import (
	"net"
	"net/url"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// oauthSettings turn cairn into an OAuth 2.1 resource server beside its
// API keys (docs/decisions.md D44): empty issuer, OAuth off.
type oauthSettings struct {
	// issuer is the authorization server's issuer URL (CAIRN_OAUTH_ISSUER).
	issuer string
	// resource is this server's canonical resource URL, the audience its
	// tokens must name (CAIRN_OAUTH_RESOURCE; default the listener's /mcp).
	resource string
}

// OAuthEnvPrefix begins the names of the OAuth settings, which are an HTTP
// listener's own as CAIRN_HTTP_* are.
const OAuthEnvPrefix = "CAIRN_OAUTH_"

// loadOAuthSettings reads CAIRN_OAUTH_ISSUER and CAIRN_OAUTH_RESOURCE;
// defaultResource is the listener's /mcp URL.
func loadOAuthSettings(getenv func(string) string, defaultResource string) (oauthSettings, error) {
	issuer := strings.TrimSpace(getenv("CAIRN_OAUTH_ISSUER"))
	resource := strings.TrimSpace(getenv("CAIRN_OAUTH_RESOURCE"))
	if issuer == "" {
		if resource != "" {
			return oauthSettings{}, errs.New(400, errs.ConfigInvalid, "CAIRN_OAUTH_RESOURCE is set without CAIRN_OAUTH_ISSUER: set the authorization server's issuer URL too, or unset it").With("field", "CAIRN_OAUTH_RESOURCE")
		}
		return oauthSettings{}, nil
	}
	if err := checkOAuthURL("CAIRN_OAUTH_ISSUER", issuer); err != nil {
		return oauthSettings{}, err
	}
	if resource == "" {
		resource = defaultResource
	} else if err := checkOAuthURL("CAIRN_OAUTH_RESOURCE", resource); err != nil {
		return oauthSettings{}, err
	}
	return oauthSettings{issuer: issuer, resource: resource}, nil
}

// checkOAuthURL accepts an absolute https:// URL, or http:// on a loopback
// host (development and tests), without a fragment.
func checkOAuthURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return errs.Newf(400, errs.ConfigInvalid, "%s %q is not an absolute URL without query or fragment (example: https://id.example.com)", field, raw).With("field", field)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return errs.Newf(400, errs.ConfigInvalid, "%s %q must be an https:// URL (http:// only on a loopback host: 127.0.0.1, ::1, localhost)", field, raw).With("field", field)
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (o oauthSettings) enabled() bool { return o.issuer != "" }
