package clientsession

import (
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
)

// Choice is what one HTTP request chose of its listener's tools with the
// X-MCP-Toolsets and X-MCP-Tools headers or a /mcp/x/{toolset} URL
// (docs/decisions.md D39): the request lists and may call only the tools of
// the toolsets it named and the tools it named, within its listener's
// toolsets and mode (its ceiling, D21) and its key's scopes (D22). A
// request that names neither has no Choice.
type Choice struct {
	// All is "all": every toolset of the ceiling.
	All bool
	// Toolsets are the toolsets named.
	Toolsets map[string]bool
	// Tools are the tools named one by one.
	Tools map[string]bool
	// Exclude are the tools left out of the rest; it wins over Tools.
	Exclude map[string]bool
	// From names where Toolsets came from: "X-MCP-Toolsets", or the URL
	// ("URL /mcp/x/core"); empty when the request named no toolset.
	From string
}

// allows reports whether the choice includes t.
func (c *Choice) allows(t *registry.Tool) bool {
	return c == nil || (c.All || c.Toolsets[t.Toolset] || c.Tools[t.Name]) && !c.Exclude[t.Name]
}

// Excludes reports whether the choice left out the tool named name.
func (c *Choice) Excludes(name string) bool { return c != nil && c.Exclude[name] }

// Serves reports whether s serves toolset ts: its toolsets allow it and
// its request's choice, if any, named it (a tool named alone does not
// serve its toolset).
func (s *Settings) Serves(ts string) bool {
	return s.Toolsets.Allows(ts) && (s.Choice == nil || s.Choice.All || s.Choice.Toolsets[ts])
}

// String renders the choice as the headers would name it.
func (c *Choice) String() string {
	if c == nil {
		return ""
	}
	var parts []string
	if c.All {
		parts = append(parts, "all")
	}
	for k := range c.Toolsets {
		parts = append(parts, k)
	}
	sort.Strings(parts)
	var tools []string
	for k := range c.Tools {
		tools = append(tools, k)
	}
	sort.Strings(tools)
	out := "toolsets=" + strings.Join(parts, ",") + " tools=" + strings.Join(tools, ",")
	if len(c.Exclude) > 0 {
		var ex []string
		for k := range c.Exclude {
			ex = append(ex, k)
		}
		sort.Strings(ex)
		out += " exclude=" + strings.Join(ex, ",")
	}
	return out
}

// Choose returns the settings of one request of a session with s: its
// choice of tools (nil: all of s's) and, when readOnlyFrom names what
// asked for it (the X-MCP-Readonly header, the /readonly URL), READONLY
// mode (MINIMAL stays MINIMAL; a session already READONLY keeps
// CAIRN_MODE as the cause). s is not changed.
func (s *Settings) Choose(c *Choice, readOnlyFrom string) *Settings {
	out := *s
	out.Choice = c
	if readOnlyFrom != "" && out.Mode != config.ModeMinimal && out.Mode != config.ModeReadOnly {
		out.Mode, out.ModeFrom = config.ModeReadOnly, readOnlyFrom
	}
	return &out
}
