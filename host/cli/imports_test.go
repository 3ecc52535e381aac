package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// The host talks to areas only through the plugin protocol (docs/decisions.md D22):
// no package under host/ imports an area's packages, so no host
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

// The host speaks to plugins in the seam's types (docs/decisions.md
// D34): the protocol's generated types are internal to the SDK module (Go
// keeps the host out of them), and the host reaches a plugin process only
// through the SDK's host-side connection (sdk/hostconn), which only the
// plugin boundary (host/supervisor) imports, in its code or its tests.
func TestOnlyTheSeamImportsTheProtocolTypes(t *testing.T) {
	const conn = "github.com/cairn-mcp/cairn/sdk/hostconn"
	allowed := map[string]bool{
		"github.com/cairn-mcp/cairn/host/supervisor": true,
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`, "github.com/cairn-mcp/cairn/host/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		for _, imp := range fields[1:] {
			if imp != conn {
				continue
			}
			seen[pkg] = true
			if !allowed[pkg] {
				t.Errorf("%s imports %s: outside host/supervisor the host calls plugins through the supervisor", pkg, imp)
			}
		}
	}
	// The rule is checked against real imports: the boundary itself must
	// show up, or the listing above did not see the connection at all.
	if !seen["github.com/cairn-mcp/cairn/host/supervisor"] {
		t.Fatalf("go list shows no import of %s by host/supervisor; the check saw nothing", conn)
	}
}
