package clientsession

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
)

// A request's choice narrows its session's tools and never widens them
// (docs/decisions.md D39); a call outside it is a 403 naming the header.
func TestChoiceNarrowsTheSession(t *testing.T) {
	t.Parallel()
	coreSdd, _ := config.ParseToolsets("core,sdd")
	base := &Settings{Mode: config.ModeFull, Toolsets: coreSdd}
	write := &registry.Tool{Name: "task_create", Owner: "core", Toolset: "core"}
	read := &registry.Tool{Name: "task_list", Owner: "core", Toolset: "core", ReadOnly: true}
	sdd := &registry.Tool{Name: "sdd_vitals", Owner: "sdd", Toolset: "sdd", ReadOnly: true}
	vision := &registry.Tool{Name: "vision_describe", Owner: "vision", Toolset: "vision", ReadOnly: true}
	plugin := &registry.Tool{Name: "weather_get", Owner: "weather", Toolset: "weather", ReadOnly: true}
	ping := &registry.Tool{Name: "server_ping", Owner: registry.HostOwner, Toolset: "system", ReadOnly: true}

	coreOnly := base.Choose(&Choice{Toolsets: map[string]bool{"core": true}, From: "X-MCP-Toolsets"}, "")
	for tool, want := range map[*registry.Tool]bool{write: true, read: true, sdd: false, vision: false, plugin: false, ping: true} {
		if got := Visible(coreOnly, tool); got != want {
			t.Errorf("core chosen: %s visible %v, want %v", tool.Name, got, want)
		}
	}
	if !coreOnly.Serves("core") || coreOnly.Serves("sdd") || !base.Serves("sdd") || base.Serves("vision") {
		t.Errorf("Serves: core chosen %v/%v, base %v/%v", coreOnly.Serves("core"), coreOnly.Serves("sdd"), base.Serves("sdd"), base.Serves("vision"))
	}
	e := Refusal(coreOnly, sdd)
	if e.Status != 403 || e.Details["required"] != "toolset sdd" || !strings.Contains(e.Message, "X-MCP-Toolsets") {
		t.Errorf("refusal outside the choice: %v", e)
	}
	if e := Refusal(coreOnly, vision); !strings.Contains(e.Message, "CAIRN_TOOLSETS") {
		t.Errorf("refusal outside the session: %v", e)
	}

	oneTool := base.Choose(&Choice{Tools: map[string]bool{"sdd_vitals": true}}, "X-MCP-Readonly")
	for tool, want := range map[*registry.Tool]bool{write: false, read: false, sdd: true, ping: true} {
		if got := Visible(oneTool, tool); got != want {
			t.Errorf("sdd_vitals chosen read-only: %s visible %v, want %v", tool.Name, got, want)
		}
	}
	if oneTool.Mode != config.ModeReadOnly || base.Mode != config.ModeFull || base.Choice != nil {
		t.Errorf("Choose changed the base (%s, %v) or missed read-only (%s)", base.Mode, base.Choice, oneTool.Mode)
	}
	if Visible(base.Choose(&Choice{All: true}, ""), vision) {
		t.Error("all widened the session to vision")
	}
	minimal := &Settings{Mode: config.ModeMinimal, Toolsets: coreSdd}
	if m := minimal.Choose(nil, "X-MCP-Readonly"); m.Mode != config.ModeMinimal {
		t.Errorf("read-only over MINIMAL gives %s", m.Mode)
	}
}
