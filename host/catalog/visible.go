package catalog

import (
	"context"
	"sort"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Refuse is the pipeline's filter: nil when the calling session may call
// the tool, else the typed refusal.
func (c *Catalog) Refuse(ctx context.Context, t *registry.Tool) *errs.Error {
	s := c.SessionOf(ctx)
	if clientsession.Visible(s, t) {
		return nil
	}
	return clientsession.Refusal(s, t)
}

// VisibleTo reports whether the session in ctx sees the registered tool
// name.
func (c *Catalog) VisibleTo(ctx context.Context, name string) bool {
	t, ok := c.reg.Get(name)
	return ok && clientsession.Visible(c.SessionOf(ctx), t)
}

// VisibleTools lists the tools a session with the host's own settings
// sees, sorted by name.
func (c *Catalog) VisibleTools() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range c.reg.List() {
		if clientsession.Visible(c.defaultSettings, t) {
			out = append(out, t)
		}
	}
	return out
}

// Servable lists every tool some session may call: all but the internal
// ones. MCP serves these; each session's list and calls are filtered.
func (c *Catalog) Servable() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range c.reg.List() {
		if t.Toolset != sdk.InternalToolset {
			out = append(out, t)
		}
	}
	return out
}

// VisiblePlugins names the plugins with a tool the session in ctx sees
// (D21). Their prompts and skills are the session's too: one that tells the
// agent to call tools it cannot call (the sdd workflow without the sdd
// toolset, anything in MINIMAL mode) is noise.
func (c *Catalog) VisiblePlugins(ctx context.Context) map[string]bool {
	s := c.SessionOf(ctx)
	visible := map[string]bool{}
	for _, t := range c.reg.List() {
		if t.Owner != registry.HostOwner && clientsession.Visible(s, t) {
			visible[t.Owner] = true
		}
	}
	return visible
}

// MCPTaskPlugins names the plugins with a tool that runs as an MCP task,
// sorted.
func (c *Catalog) MCPTaskPlugins() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range c.reg.List() {
		if t.TaskSupport != "" && !seen[t.Owner] {
			seen[t.Owner] = true
			out = append(out, t.Owner)
		}
	}
	sort.Strings(out)
	return out
}
