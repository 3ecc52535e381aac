package config

import (
	"net/url"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// parseTSAURL checks CAIRN_AUDIT_TSA_URL, the RFC 3161 timestamp authority
// that anchors `cairn audit export --format sigstore` (docs/decisions.md
// D38): empty, or an absolute http(s) URL with a host.
func parseTSAURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return raw, nil
	}
	e := errs.Newf(400, errs.ConfigInvalid, "CAIRN_AUDIT_TSA_URL %q: use the http(s) URL of an RFC 3161 timestamp authority, such as https://tsa.example.internal/api/v1/timestamp", raw)
	e.Details["field"], e.Details["constraint"] = "CAIRN_AUDIT_TSA_URL", "format"
	return "", e
}
