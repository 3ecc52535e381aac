// Package clientsession holds what is each MCP client session's own in a
// shared server (docs/decisions.md D21): its settings, the rules deciding
// which tools it sees and may call, its limits, its resource subscriptions
// and the log lines it hears (the server's warnings, its requests' own).
// A client session is one MCP client's connection (a stdio pipe, or an
// HTTP session named by its Mcp-Session-Id), not an audit session or a
// computer-use session. Every transport opens client sessions with it;
// the pipeline's filter asks it.
package clientsession

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Settings are what docs/decisions.md D21 makes each session's own in a
// shared server: identity, active project, toolsets and mode.
type Settings struct {
	// AgentID is the session's CAIRN_AGENT_ID (empty: the client's name).
	AgentID string
	// Project is the session's CAIRN_PROJECT (ProjectSet), else the slug of
	// its workspace root's directory name (D24); a call without `project`
	// uses the project the session used last before the slug (D31).
	Project    string
	ProjectSet bool
	// Toolsets and Mode decide which tools the session lists and calls.
	Toolsets config.Toolsets
	Mode     string
	// Key identifies the session across daemon restarts (the relay's id);
	// with a JSON-RPC id it forms a call's idempotency key.
	Key string
	// Choice, when set, narrows Toolsets to what one HTTP request chose
	// (docs/decisions.md D39).
	Choice *Choice
	// ModeFrom names what made Mode READONLY when one HTTP request chose
	// it (the X-MCP-Readonly header or the /readonly URL); empty when Mode
	// is the session's own CAIRN_MODE. A refusal names the cause to undo.
	ModeFrom string
	// Warnings name what was wrong in the session's settings; its client
	// gets each as an MCP log message after initialize (D21).
	Warnings []string
}

type settingsKey struct{}

// With returns a context carrying a session's settings.
func With(ctx context.Context, s *Settings) context.Context {
	return context.WithValue(ctx, settingsKey{}, s)
}

// From returns the settings of the session running in ctx, or def for a
// transport that carries none (HTTP without a listener's own).
func From(ctx context.Context, def *Settings) *Settings {
	if s, ok := ctx.Value(settingsKey{}).(*Settings); ok && s != nil {
		return s
	}
	return def
}

// Default returns the settings a session gets from the host's own
// configuration (stdio without a daemon, HTTP).
func Default(cfg config.Settings) *Settings {
	project := cfg.Project
	if project == "" {
		project = ProjectSlug(cfg.Root)
	}
	return &Settings{AgentID: cfg.AgentID, Project: project, ProjectSet: cfg.Project != "", Toolsets: cfg.Toolsets, Mode: cfg.Mode,
		Warnings: cfg.Warnings}
}

// Visible decides whether a tool is exposed to a session.
func Visible(s *Settings, t *registry.Tool) bool {
	if t.Owner == registry.HostOwner {
		return true
	}
	if t.Toolset == sdk.InternalToolset || s.Mode == config.ModeMinimal {
		return false
	}
	if s.Mode == config.ModeReadOnly && !t.ReadOnly {
		return false
	}
	return s.Toolsets.Allows(t.Toolset) && s.Choice.allows(t)
}

// Refusal explains why a session may not call a tool it does not see: a
// typed 403 naming the mode or toolset (D22), never "tool not found".
func Refusal(s *Settings, t *registry.Tool) *errs.Error {
	switch {
	case t.Toolset == sdk.InternalToolset:
		return errs.NotFoundf(errs.NotFound, "name", "no tool named %q", t.Name)
	case s.Mode == config.ModeMinimal:
		e := errs.Newf(403, errs.Forbidden, "tool %s is not available in MINIMAL mode, which serves only the host's system tools; this session's mode comes from CAIRN_MODE: start the session (over HTTP, the server) with CAIRN_MODE=FULL", t.Name)
		e.Details["required"] = "mode FULL"
		e.Details["setting"] = "CAIRN_MODE"
		return e
	case s.Mode == config.ModeReadOnly && !t.ReadOnly:
		return readOnlyRefusal(s, t)
	case s.Choice.Excludes(t.Name):
		e := errs.Newf(403, errs.Forbidden, "tool %s is left out by this request's X-MCP-Exclude-Tools; remove it from that header to call it", t.Name)
		e.Details["required"] = "tool " + t.Name + " not excluded"
		e.Details["header"] = "X-MCP-Exclude-Tools"
		return e
	case s.Toolsets.Allows(t.Toolset):
		return choiceRefusal(s, t)
	default:
		e := errs.Newf(403, errs.Forbidden, "tool %s belongs to toolset %s, which this session does not enable (CAIRN_TOOLSETS=%s); add %s to CAIRN_TOOLSETS", t.Name, t.Toolset, s.Toolsets, t.Toolset)
		e.Details["required"] = "toolset " + t.Toolset
		e.Details["setting"] = "CAIRN_TOOLSETS"
		return e
	}
}

var slugRun = regexp.MustCompile(`[^a-z0-9-]+`)

// ProjectSlug turns a workspace root into the default project slug (D24):
// its directory name lowercased, characters outside [a-z0-9-] replaced by
// "-", trimmed to ^[a-z0-9][a-z0-9-]{0,62}$. A name with nothing usable
// gives "workspace".
func ProjectSlug(root string) string {
	name := strings.ToLower(filepath.Base(filepath.Clean(root)))
	name = slugRun.ReplaceAllString(name, "-")
	name = strings.TrimLeft(name, "-")
	if len(name) > 63 {
		name = name[:63]
	}
	name = strings.TrimRight(name, "-")
	if name == "" || name == "." || name == "/" {
		return "workspace"
	}
	return name
}
