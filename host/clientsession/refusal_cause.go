package clientsession

import (
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The refusals whose cause is a choice, not a fixed setting: they name
// what made the tool unavailable, so the user undoes that — the request's
// header or URL (docs/decisions.md D39) or the session's CAIRN_MODE
// (D21) — and details carry the header or setting by name.

// readOnlyRefusal refuses a write tool in READONLY mode, naming what set
// the mode.
func readOnlyRefusal(s *Settings, t *registry.Tool) *errs.Error {
	var e *errs.Error
	switch s.ModeFrom {
	case "":
		e = errs.Newf(403, errs.Forbidden, "tool %s writes, and this session runs in READONLY mode, set by CAIRN_MODE; start the session (over HTTP, the server) with CAIRN_MODE=FULL to write", t.Name)
		e.Details["setting"] = "CAIRN_MODE"
	case "X-MCP-Readonly":
		e = errs.Newf(403, errs.Forbidden, "tool %s writes, and this request asked for read-only tools with X-MCP-Readonly: true; drop that header or send X-MCP-Readonly: false to write", t.Name)
		e.Details["header"] = s.ModeFrom
	default:
		e = errs.Newf(403, errs.Forbidden, "tool %s writes, and this request's %s serves only read-only tools; connect without /readonly to write", t.Name, s.ModeFrom)
		e.Details["header"] = s.ModeFrom
	}
	e.Details["required"] = "mode FULL"
	return e
}

// choiceRefusal refuses a tool of the session's toolsets that the
// request's choice left out, naming where the choice came from.
func choiceRefusal(s *Settings, t *registry.Tool) *errs.Error {
	var e *errs.Error
	switch from := s.Choice.From; from {
	case "", "X-MCP-Toolsets":
		e = errs.Newf(403, errs.Forbidden, "tool %s belongs to toolset %s, which this request did not choose (%s); add %s to the X-MCP-Toolsets header or %s to X-MCP-Tools", t.Name, t.Toolset, s.Choice, t.Toolset, t.Name)
		if from == "" {
			from = "X-MCP-Tools"
		}
		e.Details["header"] = from
	default:
		e = errs.Newf(403, errs.Forbidden, "tool %s belongs to toolset %s, which this request's %s did not choose; connect to /mcp/x/%s, or to /mcp with X-MCP-Toolsets naming %s, or add %s to X-MCP-Tools", t.Name, t.Toolset, from, t.Toolset, t.Toolset, t.Name)
		e.Details["header"] = "URL"
	}
	e.Details["required"] = "toolset " + t.Toolset
	return e
}
