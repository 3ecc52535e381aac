package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
)

// CheckToolsets drops from the host's own session the CAIRN_TOOLSETS
// entries no loaded plugin provides, so a typo neither hides every tool
// nor stops the server: it is a warning (docs/decisions.md D21).
func (c *Catalog) CheckToolsets(log hclog.Logger) {
	ts, w := c.KnownToolsets(c.defaultSettings.Mode, c.defaultSettings.Toolsets)
	if w == "" {
		return
	}
	log.Warn(w)
	s := *c.defaultSettings
	s.Toolsets, s.Warnings = ts, append(append([]string(nil), s.Warnings...), w)
	c.defaultSettings = &s
}

// KnownToolsets drops the toolsets that no loaded plugin provides from an
// explicit CAIRN_TOOLSETS and names them, with the toolsets that are, in a
// warning ("" when none). When nothing valid is left it serves the system
// tools only: a typo never widens what a session may call
// (docs/decisions.md D42).
func (c *Catalog) KnownToolsets(mode string, ts config.Toolsets) (config.Toolsets, string) {
	if mode == config.ModeMinimal || !ts.Explicit {
		return ts, ""
	}
	provided := map[string]bool{}
	for _, t := range c.reg.List() {
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

// ChoosableToolsets lists the toolsets of the plugins' servable tools,
// sorted: what an HTTP request may name when it chooses its toolsets
// (docs/decisions.md D39). The host's own tools are every session's and
// are not chosen.
func (c *Catalog) ChoosableToolsets() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range c.Servable() {
		if t.Owner != registry.HostOwner && !seen[t.Toolset] {
			seen[t.Toolset] = true
			out = append(out, t.Toolset)
		}
	}
	sort.Strings(out)
	return out
}
