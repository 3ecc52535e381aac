package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A stdio session is answered once the plugins its toolsets need are up: a
// built-in area none of whose toolsets it allows (vision, here replaced by
// a test plugin held before its handshake) starts after, and reaches the
// host with tools/list_changed (docs/decisions.md D46).
func TestToolsListAnsweredBeforeALaterAreaIsUp(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	gate := filepath.Join(w.root, "vision-may-start")
	w.writeFile(".cairn/config.yaml", fmt.Sprintf(`plugins:
  vision:
    path: %s
    env: {TESTKIT_NAME: vision, TESTKIT_START_GATE: %s}
`, testkitBin, gate), 0o644)
	openGate := func() {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	s := w.serve()
	// Runs before the session's own cleanup: a stop waits for the plugins
	// still starting.
	t.Cleanup(openGate)

	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	res, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
		if strings.HasPrefix(tool.Name, "vision_") {
			t.Errorf("tools/list lists %s while its plugin is held before its handshake", tool.Name)
		}
	}
	for _, want := range []string{"task_create", "server_health"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s, whose plugin the session waits for", want)
		}
	}
	if _, err := os.Stat(gate); err == nil {
		t.Fatal("the gate opened before tools/list was answered")
	}
	health := structured(t, s.call("server_health", map[string]any{}))
	for _, p := range health["plugins"].([]any) {
		if m := p.(map[string]any); m["name"] == "vision" && m["state"] == "running" {
			t.Fatalf("vision runs before its gate opened: %v", m)
		}
	}

	before := s.notifications("notifications/tools/list_changed")
	openGate()
	eventually(t, patience, "tools/list_changed once vision is up", func() bool {
		return s.notifications("notifications/tools/list_changed") > before
	})
	eventually(t, patience, "vision running with its tools", func() bool {
		health := structured(t, s.call("server_health", map[string]any{}))
		for _, p := range health["plugins"].([]any) {
			if m := p.(map[string]any); m["name"] == "vision" {
				n, _ := m["tools"].(float64)
				return m["state"] == "running" && n > 0
			}
		}
		return false
	})
}
