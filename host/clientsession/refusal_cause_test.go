package clientsession

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
)

// A refusal names what caused it — the request's header, its URL, or the
// session's CAIRN_MODE or CAIRN_TOOLSETS — and tells how to undo that
// cause, not another (docs/decisions.md D39, D21).
func TestRefusalNamesItsCause(t *testing.T) {
	t.Parallel()
	coreSdd, _ := config.ParseToolsets("core,sdd")
	full := &Settings{Mode: config.ModeFull, Toolsets: coreSdd}
	readOnly := &Settings{Mode: config.ModeReadOnly, Toolsets: coreSdd}
	write := &registry.Tool{Name: "task_create", Owner: "core", Toolset: "core"}
	sdd := &registry.Tool{Name: "sdd_vitals", Owner: "sdd", Toolset: "sdd", ReadOnly: true}
	core := func(from string) *Choice {
		return &Choice{Toolsets: map[string]bool{"core": true}, Tools: map[string]bool{}, From: from}
	}
	for _, c := range []struct {
		name string
		s    *Settings
		tool *registry.Tool
		// says must be in the message, never must not; key=value the detail.
		says, never []string
		key, value  string
	}{
		{"X-MCP-Readonly header", full.Choose(nil, "X-MCP-Readonly"), write,
			[]string{"X-MCP-Readonly: true", "drop that header", "X-MCP-Readonly: false"}, []string{"CAIRN_MODE"}, "header", "X-MCP-Readonly"},
		{"/readonly URL", full.Choose(core("URL /mcp/x/core"), "URL /readonly"), write,
			[]string{"URL /readonly", "without /readonly"}, []string{"CAIRN_MODE", "X-MCP-Readonly"}, "header", "URL /readonly"},
		{"CAIRN_MODE READONLY", readOnly, write,
			[]string{"CAIRN_MODE=FULL"}, []string{"X-MCP-Readonly"}, "setting", "CAIRN_MODE"},
		{"CAIRN_MODE READONLY, header too", readOnly.Choose(nil, "X-MCP-Readonly"), write,
			[]string{"CAIRN_MODE=FULL"}, []string{"X-MCP-Readonly"}, "setting", "CAIRN_MODE"},
		{"MINIMAL", &Settings{Mode: config.ModeMinimal, Toolsets: coreSdd}, sdd,
			[]string{"CAIRN_MODE=FULL"}, nil, "setting", "CAIRN_MODE"},
		{"X-MCP-Toolsets header", full.Choose(core("X-MCP-Toolsets"), ""), sdd,
			[]string{"X-MCP-Toolsets header", "sdd_vitals to X-MCP-Tools"}, []string{"CAIRN_TOOLSETS", "/mcp/x/"}, "header", "X-MCP-Toolsets"},
		{"X-MCP-Tools alone", full.Choose(&Choice{Tools: map[string]bool{"task_list": true}}, ""), sdd,
			[]string{"X-MCP-Tools"}, []string{"CAIRN_TOOLSETS"}, "header", "X-MCP-Tools"},
		{"/mcp/x/core URL", full.Choose(core("URL /mcp/x/core"), ""), sdd,
			[]string{"URL /mcp/x/core did not choose", "/mcp/x/sdd", "X-MCP-Toolsets naming sdd"}, []string{"CAIRN_TOOLSETS"}, "header", "URL"},
		{"CAIRN_TOOLSETS", full, &registry.Tool{Name: "vision_describe", Owner: "vision", Toolset: "vision", ReadOnly: true},
			[]string{"CAIRN_TOOLSETS"}, []string{"X-MCP"}, "setting", "CAIRN_TOOLSETS"},
	} {
		e := Refusal(c.s, c.tool)
		if e.Status != 403 || e.Details[c.key] != c.value {
			t.Errorf("%s: %d %s=%v, want 403 %s=%s (%s)", c.name, e.Status, c.key, e.Details[c.key], c.key, c.value, e.Message)
		}
		for _, s := range c.says {
			if !strings.Contains(e.Message, s) {
				t.Errorf("%s: message %q does not say %q", c.name, e.Message, s)
			}
		}
		for _, s := range c.never {
			if strings.Contains(e.Message, s) {
				t.Errorf("%s: message %q names %q, which did not cause it", c.name, e.Message, s)
			}
		}
	}
}
