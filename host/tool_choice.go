package host

import (
	"sort"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk"
)

// What an HTTP request may name when it chooses its toolsets and tools
// (docs/decisions.md D39): the servable tools, never the internal ones.

// choosableToolsets lists the toolsets of the plugins' servable tools,
// sorted; the host's own tools are every session's and are not chosen.
func (h *Host) choosableToolsets() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range h.servable() {
		if t.Owner != registry.HostOwner && !seen[t.Toolset] {
			seen[t.Toolset] = true
			out = append(out, t.Toolset)
		}
	}
	sort.Strings(out)
	return out
}

// toolFacts describes a servable tool for a request's choice: its toolset,
// the API-key scope it needs (D22) and whether it only reads.
func (h *Host) toolFacts(name string) (httpserve.ToolFacts, bool) {
	t, ok := h.reg.Get(name)
	if !ok || t.Toolset == sdk.InternalToolset {
		return httpserve.ToolFacts{}, false
	}
	return httpserve.ToolFacts{Toolset: t.Toolset, Scope: pipeline.RequiredScope(t), ReadOnly: t.ReadOnly}, true
}
