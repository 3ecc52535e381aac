package httpserve

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// ToolFacts are what a request's choice needs to know of a tool it names.
type ToolFacts struct {
	// Toolset is the tool's toolset.
	Toolset string
	// Scope is the API-key scope a call needs (docs/decisions.md D22): ""
	// for the host's own tools.
	Scope string
	// ReadOnly is true for a tool annotated read-only.
	ReadOnly bool
}

// chooseTools gives a request that chose toolsets, tools or read-only mode
// (request_choice.go) the settings of its choice, so that tools/list
// answers for that request and a call outside it is refused as a session's
// would be (docs/decisions.md D39, D21). The choice is bounded by a ceiling:
// the listener's toolsets and mode, and the key's scopes (D22) — the admin
// toolset and admin tools need the admin scope, a write tool or an explicit
// X-MCP-Readonly: false the write scope, a named read-only tool the read
// scope. Asking beyond it is a 403, a name the server does not serve a 400;
// both are JSON-RPC errors naming the header and what is allowed. Every
// request is read on its own, in the revisions with sessions too.
func (s *Server) chooseTools(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			// A CORS preflight carries no key and runs nothing.
			next.ServeHTTP(w, r)
			return
		}
		c, err := parseChoice(r.Header, r.URL.Path)
		if err == nil && !c.empty() {
			base := clientsession.From(r.Context(), nil)
			if base == nil {
				base = s.h.DefaultSessionSettings()
			}
			p, keyed := PrincipalOf(r.Context())
			var chosen *clientsession.Settings
			if chosen, err = s.ceiling(base, p, keyed).choose(c); err == nil {
				r = r.WithContext(clientsession.With(r.Context(), chosen))
			}
		}
		if err != nil {
			writeChoiceError(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ceiling is the most a request may choose: its listener's session
// settings and, for a request with an API key, the key's scopes.
type ceiling struct {
	h      Handler
	base   *clientsession.Settings
	keyed  bool
	scopes []string
}

func (s *Server) ceiling(base *clientsession.Settings, p Principal, keyed bool) ceiling {
	return ceiling{h: s.h, base: base, keyed: keyed, scopes: p.Scopes}
}

// holds reports whether the caller has scope: the local operator (no key)
// holds every one.
func (c ceiling) holds(scope string) bool {
	return !c.keyed || scope == "" || slices.Contains(c.scopes, scope)
}

// toolsets lists the toolsets the ceiling allows.
func (c ceiling) toolsets() []string {
	out := []string{}
	if c.base.Mode == config.ModeMinimal {
		return out
	}
	for _, ts := range c.h.Toolsets() {
		if c.base.Toolsets.Allows(ts) && (ts != "admin" || c.holds("admin")) {
			out = append(out, ts)
		}
	}
	return out
}

// choose checks a request's choice against the ceiling and returns its
// settings.
func (c ceiling) choose(rc requestChoice) (*clientsession.Settings, *errs.Error) {
	if rc.readOnlySet && !rc.readOnly {
		// Asking to write, explicitly.
		if c.base.Mode == config.ModeReadOnly || c.base.Mode == config.ModeMinimal {
			return nil, refuseChoice(rc.readOnlyFrom, "false", "mode FULL", []string{"true"},
				"%s: false asks to write, and this listener serves %s mode", rc.readOnlyFrom, c.base.Mode)
		}
		if !c.holds("write") {
			return nil, refuseChoice(rc.readOnlyFrom, "false", "write", []string{"true"},
				"%s: false asks to write, and this API key has no write scope (it has %v)", rc.readOnlyFrom, c.scopes)
		}
	}
	exclude, err := c.excluded(rc.exclude)
	if err != nil {
		return nil, err
	}
	if rc.toolsetsFrom == "" && len(rc.tools) == 0 {
		if exclude == nil {
			return c.base.Choose(nil, rc.readOnlyCause()), nil
		}
		return c.base.Choose(&clientsession.Choice{All: true, Exclude: exclude}, rc.readOnlyCause()), nil
	}
	allowed := c.toolsets()
	if c.base.Mode == config.ModeMinimal {
		from := rc.toolsetsFrom
		if from == "" {
			from = HeaderTools
		}
		return nil, refuseChoice(from, "", "mode FULL", allowed,
			"%s: this listener serves MINIMAL mode, only the host's system tools; no toolset or tool can be chosen", from)
	}
	choice := &clientsession.Choice{Toolsets: map[string]bool{}, Tools: map[string]bool{}, Exclude: exclude, From: rc.toolsetsFrom}
	known := c.h.Toolsets()
	for _, ts := range rc.toolsets {
		switch {
		case ts == "all":
			choice.All = true
		case !slices.Contains(known, ts):
			return nil, errs.Newf(400, errs.InvalidInput, "%s: no toolset named %q is served here (allowed: %v)", rc.toolsetsFrom, ts, allowed).
				With("header", rc.toolsetsFrom).With("name", ts).With("allowed", allowed)
		case !slices.Contains(allowed, ts):
			required := "toolset " + ts
			if ts == "admin" && c.base.Toolsets.Allows(ts) {
				required = "admin"
			}
			return nil, refuseChoice(rc.toolsetsFrom, ts, required, allowed,
				"%s: toolset %s is beyond what this request may choose (allowed: %v)", rc.toolsetsFrom, ts, allowed)
		default:
			choice.Toolsets[ts] = true
		}
	}
	for _, name := range rc.tools {
		f, ok := c.h.ToolFacts(name)
		switch {
		case !ok:
			return nil, errs.Newf(400, errs.InvalidInput, "%s: no tool named %q is served here", HeaderTools, name).
				With("header", HeaderTools).With("name", name).With("allowed_toolsets", allowed)
		case f.Scope != "" && !slices.Contains(allowed, f.Toolset):
			return nil, refuseChoice(HeaderTools, name, "toolset "+f.Toolset, allowed,
				"%s: tool %s belongs to toolset %s, beyond what this request may choose (allowed toolsets: %v)", HeaderTools, name, f.Toolset, allowed)
		case !c.holds(f.Scope):
			return nil, refuseChoice(HeaderTools, name, f.Scope, allowed,
				"%s: tool %s needs an API key with the %q scope; this key has %v", HeaderTools, name, f.Scope, c.scopes)
		case !f.ReadOnly && f.Scope != "" && c.base.Mode == config.ModeReadOnly:
			return nil, refuseChoice(HeaderTools, name, "mode FULL", allowed,
				"%s: tool %s writes, and this listener serves READONLY mode", HeaderTools, name)
		default:
			choice.Tools[name] = true
		}
	}
	return c.base.Choose(choice, rc.readOnlyCause()), nil
}

// excluded checks the tools a request leaves out: each must be a tool
// served here (a typo would otherwise leave a tool listed that its client
// meant to hide). Leaving out a tool beyond the ceiling only narrows, so
// it is not refused.
func (c ceiling) excluded(names []string) (map[string]bool, *errs.Error) {
	if len(names) == 0 {
		return nil, nil
	}
	out := make(map[string]bool, len(names))
	for _, name := range names {
		if _, ok := c.h.ToolFacts(name); !ok {
			return nil, errs.Newf(400, errs.InvalidInput, "%s: no tool named %q is served here", HeaderExcludeTools, name).
				With("header", HeaderExcludeTools).With("name", name)
		}
		out[name] = true
	}
	return out, nil
}

// refuseChoice is the 403 of a choice beyond the ceiling: details name the
// header, the name refused (when one is), what is required and what is
// allowed.
func refuseChoice(header, name, required string, allowed []string, format string, args ...any) *errs.Error {
	e := errs.Newf(403, errs.Forbidden, format, args...).With("header", header).With("allowed", allowed)
	if name != "" {
		e.Details["name"] = name
	}
	e.Details["required"] = required
	return e
}

// writeChoiceError answers a refused choice before any JSON-RPC is read:
// a JSON-RPC error without an id whose data is the cairn error (code and
// details), with the error's HTTP status.
func writeChoiceError(w http.ResponseWriter, e *errs.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION,
		Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST, e.Message, map[string]any{"code": e.Code, "details": e.Details})})
}
