package catalog_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/catalog"
	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/systemtools"
)

// TestToolsetTyposNeverWiden: a session's CAIRN_TOOLSETS, through both
// checks a session's settings get (config.SessionToolsets, then
// KnownToolsets against the loaded plugins): a list with nothing valid
// serves the system tools only and says so; a list with some valid names
// serves those and names the others and the valid choices
// (docs/decisions.md D42). Before, "sd" served core and sdd, writes
// included.
func TestToolsetTyposNeverWiden(t *testing.T) {
	reg := registry.New()
	if err := systemtools.Register(reg); err != nil {
		t.Fatal(err)
	}
	h := catalog.New(reg, nil)
	for owner, tools := range map[string][]*registry.Tool{
		"core":    {{Name: "task_create", Owner: "core", Toolset: "core"}},
		"sdd":     {{Name: "sdd_vitals", Owner: "sdd", Toolset: "sdd", ReadOnly: true}},
		"testkit": {{Name: "testkit_echo", Owner: "testkit", Toolset: "testkit"}},
	} {
		if err := reg.Set(owner, tools); err != nil {
			t.Fatal(err)
		}
	}
	const systemOnly = "server_health,server_ping"
	for _, c := range []struct {
		raw     string
		visible string
		warn    []string // each in the one warning; none: no warning
	}{
		{"sd", systemOnly, []string{"names sd, which no loaded plugin provides", "core, sdd, testkit", config.SystemOnlyNote}},
		{"sd,cor", systemOnly, []string{"names cor, sd,", config.SystemOnlyNote}},
		{"Sd!", systemOnly, []string{`"Sd!" ignored`, "core, sdd", config.SystemOnlyNote}},
		{"Sd!,sd", systemOnly, []string{`"Sd!" ignored`, "names sd", config.SystemOnlyNote}},
		{"core,sd", "server_health,server_ping,task_create,testkit_echo", []string{"names sd, which no loaded plugin provides", "core, sdd, testkit"}},
		{"sdd,Bad!", "sdd_vitals,server_health,server_ping,testkit_echo", []string{`"Bad!" ignored`}},
		{"sdd", "sdd_vitals,server_health,server_ping,testkit_echo", nil},
		{"none", systemOnly, nil},
		{"none,testkit", "server_health,server_ping,testkit_echo", nil},
	} {
		t.Run(c.raw, func(t *testing.T) {
			var warnings []string
			ts, w := config.SessionToolsets(c.raw)
			if w != "" {
				warnings = append(warnings, w)
			}
			ts.Explicit = true
			ts, w = h.KnownToolsets(config.ModeFull, ts)
			if w != "" {
				warnings = append(warnings, w)
			}
			s := &clientsession.Settings{Mode: config.ModeFull, Toolsets: ts}
			var visible []string
			for _, tool := range reg.List() {
				if clientsession.Visible(s, tool) {
					visible = append(visible, tool.Name)
				}
			}
			sort.Strings(visible)
			if got := strings.Join(visible, ","); got != c.visible {
				t.Errorf("serves %s, want %s", got, c.visible)
			}
			all := strings.Join(warnings, " | ")
			if len(c.warn) == 0 && all != "" {
				t.Errorf("warned %q, want nothing", all)
			}
			for _, want := range c.warn {
				if !strings.Contains(all, want) {
					t.Errorf("warning %q does not say %q", all, want)
				}
			}
			// What a relay sends its daemon (Toolsets.String) reads back
			// the same there.
			again, w := config.SessionToolsets(ts.String())
			again.Explicit = true
			if again, w2 := h.KnownToolsets(config.ModeFull, again); w != "" || w2 != "" || again.String() != ts.String() {
				t.Errorf("%q read back as %q (warnings %q %q)", ts.String(), again.String(), w, w2)
			}
		})
	}
}
