package e2e

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestToolsetTypoServesSystemToolsOnly: a session whose CAIRN_TOOLSETS
// holds nothing valid ("sd" for "sdd") serves the system tools only, never
// the default toolsets, and says so: on stderr, in a warning log message
// after initialize and in server_health's problems (docs/decisions.md
// D42). Through the relay (which sends its daemon the toolsets it parsed)
// and with --no-daemon. Before, "sd" served core and sdd, writes included.
func TestToolsetTypoServesSystemToolsOnly(t *testing.T) {
	const note = "serves only the system tools (server_ping, server_health)"
	for _, mode := range [][]string{sharedEnv, {"CAIRN_DAEMON=off"}} {
		t.Run(mode[0], func(t *testing.T) {
			w := newWorkspace(t)
			w.addPlugin("testkit", testkitBin)
			r := startRaw(t, w, append(append([]string{}, mode...), "CAIRN_TOOLSETS=sd")...)
			r.send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
				"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
			r.next(60*time.Second, "initialize", idIs(0))
			r.next(60*time.Second, "the warning log message", func(m map[string]any) bool {
				p, _ := m["params"].(map[string]any)
				data, _ := p["data"].(string)
				return m["method"] == "notifications/message" && p["level"] == "warning" &&
					strings.Contains(data, "CAIRN_TOOLSETS names sd") && strings.Contains(data, note)
			})
			r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})

			r.send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
			res, _ := r.next(60*time.Second, "tools/list", idIs(1))["result"].(map[string]any)
			tools, _ := res["tools"].([]any)
			var names []string
			for _, tl := range tools {
				names = append(names, tl.(map[string]any)["name"].(string))
			}
			sort.Strings(names)
			if got := strings.Join(names, ","); got != "server_health,server_ping" {
				t.Fatalf("CAIRN_TOOLSETS=sd lists %s, want the system tools only", got)
			}

			r.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "task_create",
				"arguments": map[string]any{"project": "web", "title": "must not be written"}}})
			if b, _ := json.Marshal(r.next(60*time.Second, "task_create's answer", idIs(2))); !strings.Contains(string(b), "toolset core") {
				t.Fatalf("task_create in a session serving the system tools only: %s", b)
			}

			r.send(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "server_health", "arguments": map[string]any{}}})
			health, _ := r.next(60*time.Second, "server_health", idIs(3))["result"].(map[string]any)
			sc, _ := health["structuredContent"].(map[string]any)
			problems, _ := json.Marshal(sc["problems"])
			if !strings.Contains(string(problems), "this session: CAIRN_TOOLSETS names sd") || !strings.Contains(string(problems), note) {
				t.Fatalf("server_health's problems do not say why the session serves so little: %s", problems)
			}
			eventually(t, 60*time.Second, "the warning on stderr", func() bool {
				text := r.stderr.String()
				return strings.Contains(text, "CAIRN_TOOLSETS names sd") && strings.Contains(text, note)
			})
		})
	}
}
