package ui

import (
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
)

// A login's calls run with every toolset, and in READONLY mode unless the
// login allows actions: the host refuses a write a read-only page attempts.
func TestPersonSessionModeFollowsActions(t *testing.T) {
	for _, tc := range []struct {
		actions bool
		mode    string
	}{{false, config.ModeReadOnly}, {true, config.ModeFull}} {
		s := personSession(Grant{Person: "alice", Project: "web", AllowActions: tc.actions})
		if s.Mode != tc.mode || s.AgentID != "alice" || s.Project != "web" {
			t.Errorf("actions %v: %+v", tc.actions, s)
		}
		if r := readSession(Grant{Person: "alice", AllowActions: tc.actions}); r.Mode != config.ModeFull {
			t.Errorf("actions %v: a read action runs in %s", tc.actions, r.Mode)
		}
		for _, ts := range config.BuiltinToolsets {
			if !s.Toolsets.Allows(ts) {
				t.Errorf("actions %v: toolset %s not allowed", tc.actions, ts)
			}
		}
	}
}
