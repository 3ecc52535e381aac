package httpserve

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// oauthGate is the OAuth side of a listener (docs/decisions.md D44): its
// protected resource metadata, its challenges and its token checks. A nil
// gate is OAuth off.
type oauthGate struct {
	settings oauthSettings
	verifier *tokenVerifier
	// metadataURL is where the protected resource metadata is served
	// (RFC 9728 §3.1), named in every challenge.
	metadataURL string
}

func newOAuthGate(o oauthSettings) *oauthGate {
	return &oauthGate{settings: o, verifier: newTokenVerifier(o), metadataURL: protectedResourceMetadataURL(o.resource)}
}

// protectedResourceMetadataURL inserts the well-known part between the
// resource's host and its path (RFC 9728 §3.1).
func protectedResourceMetadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return resource
	}
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
}

// challenge is the WWW-Authenticate value of a refusal with the given
// extra parameters: realm-only without OAuth, else naming the metadata.
func (g *oauthGate) challenge(params string) string {
	var parts []string
	if g == nil {
		parts = append(parts, `realm="cairn"`)
	}
	if params != "" {
		parts = append(parts, params)
	}
	if g != nil {
		parts = append(parts, `resource_metadata="`+g.metadataURL+`"`)
	}
	return "Bearer " + strings.Join(parts, ", ")
}

// serveMetadata answers the protected resource metadata (RFC 9728 §2).
func (g *oauthGate) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeHTTPError(w, errs.New(405, errs.InvalidInput, "the protected resource metadata answers GET").With("field", "method"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"resource":                 g.settings.resource,
		"authorization_servers":    []string{g.settings.issuer},
		"scopes_supported":         TokenScopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "cairn",
	})
}

// requireTokenScope refuses, with 403 insufficient_scope, a tools/call by
// an OAuth caller whose token lacks the scope the tool needs, so that the
// client can ask for it (the MCP authorization specification's step-up).
// Calls by API keys keep their D22 refusal inside the JSON-RPC answer.
func (g *oauthGate) requireTokenScope(h Handler, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PrincipalOf(r.Context())
		if !ok || p.Source != SourceOAuth {
			next.ServeHTTP(w, r)
			return
		}
		var probe struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		body := bodyOf(r)
		if len(body) == 0 || json.Unmarshal(body, &probe) != nil || probe.Method != string(mcp.MethodToolsCall) {
			next.ServeHTTP(w, r)
			return
		}
		facts, known := h.ToolFacts(probe.Params.Name)
		if !known || facts.Scope == "" || holds(p.Scopes, facts.Scope) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", g.challenge(`error="insufficient_scope", scope="cairn:`+facts.Scope+`"`))
		writeHTTPError(w, errs.Newf(403, errs.Forbidden, "tool %s needs the cairn:%s scope; this token has %v", probe.Params.Name, facts.Scope, p.Scopes).With("field", "scope"))
	})
}

func holds(scopes []string, s string) bool {
	for _, have := range scopes {
		if have == s {
			return true
		}
	}
	return false
}
