package areas_test

import (
	"testing"

	"github.com/cairn-mcp/cairn/plugins/builtin"
	_ "github.com/cairn-mcp/cairn/plugins/builtin/areas"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// An area's declared toolsets decide which sessions answer before it is up
// (docs/decisions.md D46): a tool in a toolset its area does not declare
// would reach such a session only later, with list_changed.
func TestAreasDeclareTheirToolsets(t *testing.T) {
	t.Parallel()
	for _, a := range builtin.All() {
		declared := map[string]bool{sdk.InternalToolset: true}
		for _, ts := range a.Toolsets {
			declared[ts] = true
		}
		if len(a.Toolsets) == 0 {
			t.Errorf("area %s declares no toolsets", a.Name)
		}
		used := map[string]bool{}
		for _, tool := range sdktest.Tools(a.New()) {
			used[tool.Toolset] = true
			if !declared[tool.Toolset] {
				t.Errorf("area %s: tool %s is in toolset %q, which the area does not declare", a.Name, tool.Name, tool.Toolset)
			}
		}
		for _, ts := range a.Toolsets {
			if !used[ts] {
				t.Errorf("area %s declares toolset %q, which none of its tools is in", a.Name, ts)
			}
		}
	}
}
