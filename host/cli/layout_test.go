package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// The host's packages follow the path of a call (docs/decisions.md D34):
// the transports reach the host only through their Handler, and the
// session package knows nothing of the transports or of what lies past the
// pipeline. A package on the path imports only what comes after it; these
// are the imports that would turn it backwards.
func TestTheCallPathRunsOneWay(t *testing.T) {
	const host = "github.com/cairn-mcp/cairn/host"
	past := []string{host + "/pipeline", host + "/plugin", host + "/supervisor", host + "/registry", host + "/cluster", host + "/daemon", host + "/cli", host + "/ui"}
	forbidden := map[string][]string{
		host + "/transport/stdio":     past,
		host + "/transport/httpserve": past,
		host + "/transport/jsonrpc":   append([]string{host + "/session", host + "/transport/stdio", host + "/transport/httpserve"}, past...),
		host + "/session":             {host + "/transport", host + "/pipeline", host + "/plugin", host + "/supervisor", host + "/cluster"},
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, host+"/transport/...", host+"/session").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		rules, ok := forbidden[fields[0]]
		if !ok {
			t.Errorf("%s is on the call path but has no import rule here", fields[0])
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			for _, f := range rules {
				if imp == f || strings.HasPrefix(imp, f+"/") {
					t.Errorf("%s imports %s: a transport or the session package reaches the host only through its Handler (host/transports.go)", fields[0], imp)
				}
			}
		}
	}
	if checked != len(forbidden) {
		t.Fatalf("checked %d of the %d packages on the call path: is the listing right?", checked, len(forbidden))
	}
}
