package e2e

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var (
	everythingOnce sync.Once
	everythingErr  string
)

// everythingFixture builds examples/cairn-plugin-everything (once per run)
// and returns its path.
func everythingFixture(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "cairn-plugin-everything")
	everythingOnce.Do(func() {
		build := exec.Command("go", "build", "-o", bin, "github.com/cairn-mcp/cairn/examples/cairn-plugin-everything")
		if out, err := build.CombinedOutput(); err != nil {
			everythingErr = err.Error() + "\n" + string(out)
		}
	})
	if everythingErr != "" {
		t.Fatalf("build the fixture plugin: %s", everythingErr)
	}
	return bin
}

// everythingWorkspace is a workspace with the fixture plugin trusted and
// its toolset visible.
func everythingWorkspace(t *testing.T) *workspace {
	t.Helper()
	fixture := everythingFixture(t)
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, fixture)
	w.env = append(w.env, trustEnv, "CAIRN_TOOLSETS=all")
	w.addPlugin("everything", fixture)
	return w
}

// everythingClients connects one client per transport and era to a
// workspace with the fixture plugin: stdio on its own host and through the
// relay, and HTTP, each on 2025-11-25 and 2026-07-28.
func everythingClients(t *testing.T, each func(t *testing.T, ec *eraClient)) {
	for _, modern := range []bool{false, true} {
		era := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]
		for _, tr := range []string{"no daemon", "relay", "http"} {
			t.Run(era+" "+tr, func(t *testing.T) {
				w := everythingWorkspace(t)
				var ec *eraClient
				switch tr {
				case "no daemon":
					ec = stdioEraClient(t, w, modern)
				case "relay":
					ec = stdioEraClient(t, w, modern, sharedEnv...)
				default:
					url, _ := startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
					ec = httpEraClient(t, url, modern)
				}
				each(t, ec)
			})
		}
	}
}

// pluginLines are the notifications/message lines the fixture plugin sent.
func (ec *eraClient) pluginLines() []mcp.JSONRPCNotification {
	ec.mu.Lock()
	defer ec.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range ec.notes {
		if n.Method == string(mcp.MethodNotificationMessage) && n.Params.AdditionalFields["logger"] == "everything" {
			out = append(out, n)
		}
	}
	return out
}

// A plugin's sdk.Log lines reach the client that made the call, before the
// result, at the level it asked for (logging/setLevel on 2025-11-25, the
// request's _meta on 2026-07-28), and not when it asked for less.
func TestPluginLogLinesReachTheCaller(t *testing.T) {
	everythingClients(t, func(t *testing.T, ec *eraClient) {
		setLevel := func(l mcp.LoggingLevel) {
			//lint:ignore SA1019 logging is part of both eras under test
			if err := ec.c.SetLevel(t.Context(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: l}}); err != nil {
				t.Fatal(err)
			}
		}
		setLevel(mcp.LoggingLevelError)
		ec.call("test_tool_with_logging", map[string]any{})
		if got := ec.pluginLines(); len(got) != 0 {
			t.Fatalf("at level error the client heard the plugin's info lines: %v", got)
		}

		setLevel(mcp.LoggingLevelInfo)
		ec.call("test_tool_with_logging", map[string]any{})
		// The lines travel before the result on the same stream, so they
		// are here when the call returns.
		got := ec.pluginLines()
		if len(got) != 3 {
			t.Fatalf("heard %d plugin log lines before the result, want 3: %v", len(got), got)
		}
		for i, want := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			p := got[i].Params.AdditionalFields
			data, _ := p["data"].(map[string]any)
			if p["level"] != "info" || data["message"] != want || data["tool"] != "test_tool_with_logging" {
				t.Fatalf("line %d = %v; want level info, message %q and the tool's field", i, p, want)
			}
		}
	})
}
