package host

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/session"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Which tools a session sees and may call: the rules are session's
// (session.Visible, session.Refusal); these apply them to the registry.

// refuse is the pipeline's filter: nil when the calling session may call
// the tool, else the typed refusal.
func (h *Host) refuse(ctx context.Context, t *registry.Tool) *errs.Error {
	s := h.sessionOf(ctx)
	if session.Visible(s, t) {
		return nil
	}
	return session.Refusal(s, t)
}

// filterListed keeps the tools the calling session sees.
func (h *Host) filterListed(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	s := h.sessionOf(ctx)
	out := tools[:0]
	for _, mt := range tools {
		if t, ok := h.reg.Get(mt.Name); ok && session.Visible(s, t) {
			out = append(out, mt)
		}
	}
	return out
}

// VisibleTools lists the tools a session with the host's own settings
// sees, sorted by name.
func (h *Host) VisibleTools() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range h.reg.List() {
		if session.Visible(h.defaultSession, t) {
			out = append(out, t)
		}
	}
	return out
}

// servable lists every tool some session may call: all but the internal
// ones. MCP serves these; each session's list and calls are filtered.
func (h *Host) servable() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range h.reg.List() {
		if t.Toolset != sdk.InternalToolset {
			out = append(out, t)
		}
	}
	return out
}

// AllTools lists every registered tool, visible or not.
func (h *Host) AllTools() []*registry.Tool { return h.reg.List() }

// checkToolsets drops from the host's own session the CAIRN_TOOLSETS
// entries no loaded plugin provides, so a typo neither hides every tool
// nor stops the server: it is a warning (docs/decisions.md D21).
func (h *Host) checkToolsets() {
	ts, w := h.KnownToolsets(h.defaultSession.Mode, h.defaultSession.Toolsets)
	if w == "" {
		return
	}
	h.log.Warn(w)
	s := *h.defaultSession
	s.Toolsets, s.Warnings = ts, append(append([]string(nil), s.Warnings...), w)
	h.defaultSession = &s
}

// KnownToolsets drops the toolsets that no loaded plugin provides from an
// explicit CAIRN_TOOLSETS and names them, with the toolsets that are, in a
// warning ("" when none). When nothing valid is left it serves the system
// tools only: a typo never widens what a session may call
// (docs/decisions.md D42).
func (h *Host) KnownToolsets(mode string, ts config.Toolsets) (config.Toolsets, string) {
	if mode == config.ModeMinimal || !ts.Explicit {
		return ts, ""
	}
	provided := map[string]bool{}
	for _, t := range h.reg.List() {
		provided[t.Toolset] = true
	}
	var unknown []string
	for name := range ts.Enabled {
		if !provided[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return ts, ""
	}
	sort.Strings(unknown)
	var have []string
	for name := range provided {
		if name != "system" && name != sdk.InternalToolset {
			have = append(have, name)
		}
	}
	sort.Strings(have)
	kept := config.Toolsets{All: ts.All, None: ts.None, Explicit: true, Enabled: map[string]bool{}, Excluded: ts.Excluded}
	for name := range ts.Enabled {
		if provided[name] {
			kept.Enabled[name] = true
		}
	}
	msg := fmt.Sprintf("CAIRN_TOOLSETS names %s, which no loaded plugin provides (valid: %s, all, none, or -name to exclude one); ignored",
		strings.Join(unknown, ", "), strings.Join(have, ", "))
	if kept.Empty() {
		kept = config.SystemOnly()
		msg += "; " + config.SystemOnlyNote
	}
	return kept, msg
}

// visiblePlugins names the plugins with a tool the session in ctx sees
// (D21). Their prompts and skills are the session's too: one that tells the
// agent to call tools it cannot call (the sdd workflow without the sdd
// toolset, anything in MINIMAL mode) is noise.
func (h *Host) visiblePlugins(ctx context.Context) map[string]bool {
	s := h.sessionOf(ctx)
	visible := map[string]bool{}
	for _, t := range h.reg.List() {
		if t.Owner != registry.HostOwner && session.Visible(s, t) {
			visible[t.Owner] = true
		}
	}
	return visible
}
