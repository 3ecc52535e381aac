package host

import (
	"context"

	"github.com/cairn-mcp/cairn/host/registry"
)

// visiblePlugins names the plugins with a tool the session in ctx sees
// (D21). Their prompts and skills are the session's too: one that tells the
// agent to call tools it cannot call (the sdd workflow without the sdd
// toolset, anything in MINIMAL mode) is noise.
func (h *Host) visiblePlugins(ctx context.Context) map[string]bool {
	s := h.sessionOf(ctx)
	visible := map[string]bool{}
	for _, t := range h.reg.List() {
		if t.Owner != registry.HostOwner && visibleTo(s, t) {
			visible[t.Owner] = true
		}
	}
	return visible
}
