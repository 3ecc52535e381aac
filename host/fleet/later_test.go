package fleet

import (
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/plugins/builtin"
)

// Only a built-in area that declares its toolsets, none of which the
// session allows, starts after the session is answered; a session with an
// explicit CAIRN_TOOLSETS waits for every plugin, whose toolsets it checks
// (docs/decisions.md D46).
func TestLaterOnlyForAreasTheSessionCannotUse(t *testing.T) {
	builtin.Register(builtin.Area{Name: "latertest-tasks", Toolsets: []string{"core"}})
	builtin.Register(builtin.Area{Name: "latertest-screen", Toolsets: []string{"vision", "computer"}})
	builtin.Register(builtin.Area{Name: "latertest-unsaid"})
	parse := func(raw string, explicit bool) config.Toolsets {
		ts, err := config.ParseToolsets(raw)
		if err != nil {
			t.Fatal(err)
		}
		ts.Explicit = explicit
		return ts
	}
	def, explicit, all := parse(config.DefaultToolsets, false), parse("core,sdd", true), parse("all", false)
	for _, c := range []struct {
		plugin string
		ts     config.Toolsets
		want   bool
	}{
		{"latertest-screen", def, true},
		{"latertest-tasks", def, false},
		{"latertest-unsaid", def, false},
		{"cairn-plugin-anything", def, false},
		{"latertest-screen", explicit, false},
		{"latertest-screen", all, false},
	} {
		if got := later(supervisor.Spec{Name: c.plugin}, c.ts); got != c.want {
			t.Errorf("later(%s, %s) = %v, want %v", c.plugin, c.ts.String(), got, c.want)
		}
	}
}
