package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// The host talks to areas only through the plugin protocol (docs/decisions.md D22,
// issue 12): no package under host/ imports an area's packages, so no host
// code can open an area's store. The built-in registry is the exception
// that links the areas into the cairn binary.
func TestHostImportsNoAreaPackage(t *testing.T) {
	allowed := map[string]bool{
		"github.com/cairn-mcp/cairn/plugins/builtin":       true,
		"github.com/cairn-mcp/cairn/plugins/builtin/areas": true,
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/cairn-mcp/cairn/host/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const plugins = "github.com/cairn-mcp/cairn/plugins/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, plugins) || allowed[imp] {
				continue
			}
			t.Errorf("%s imports %s: the host reaches areas only through the plugin protocol (call the area's tools; see host/cli/area_call.go)", pkg, imp)
		}
	}
}
