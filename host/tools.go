package host

import (
	"context"
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

// checkToolsets refuses the host's CAIRN_TOOLSETS entries that no loaded
// plugin provides, so a typo does not silently hide every tool.
func (h *Host) checkToolsets() error {
	return h.CheckToolsets(h.cfg.Mode, h.cfg.Toolsets)
}

// CheckToolsets refuses toolsets entries that no loaded plugin provides.
func (h *Host) CheckToolsets(mode string, ts config.Toolsets) error {
	if mode == config.ModeMinimal || !ts.Explicit {
		return nil
	}
	provided := map[string]bool{}
	for _, t := range h.reg.List() {
		provided[t.Toolset] = true
	}
	var unknown []string
	for ts := range ts.Enabled {
		if !provided[ts] {
			unknown = append(unknown, ts)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var have []string
	for ts := range provided {
		if ts != "system" && ts != sdk.InternalToolset {
			have = append(have, ts)
		}
	}
	sort.Strings(have)
	return errs.Newf(400, errs.ConfigInvalid, "CAIRN_TOOLSETS names %s, which no loaded plugin provides (available: %s)", strings.Join(unknown, ", "), strings.Join(have, ", "))
}
