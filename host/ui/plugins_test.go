package ui

import (
	"testing"

	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/host/trust"
)

func TestPluginRowsJoinHealthSupervisorAndTrust(t *testing.T) {
	health := []systemtools.PluginHealth{
		{Name: "core", Source: "builtin", State: "running", Status: "ok"},
		{Name: "semver", Source: "dir", State: "restarting", Status: "degraded", Restarts: 2},
	}
	states := func() ([]supervisor.Status, []trust.Untrusted) {
		return []supervisor.Status{{Name: "semver", Path: "/ws/.cairn/plugins/cairn-plugin-semver", LastExit: "exit status 2: panic: boom", NextAttempt: "2026-11-23T04:00:00.000Z"}},
			[]trust.Untrusted{{Name: "evil", Path: "/ws/.cairn/plugins/cairn-plugin-evil", Origin: "plugin dir /ws/.cairn/plugins", Reason: "not in the trust store", Command: "cairn plugins trust /ws/.cairn/plugins/cairn-plugin-evil"}}
	}
	rows := pluginRows(health, states)
	for _, tc := range []struct {
		i                                    int
		name, trust, hint, lastExit, nextTry string
	}{
		{0, "core", "built in", "", "", ""},
		{1, "semver", "trusted", "", "exit status 2: panic: boom", "2026-11-23T04:00:00.000Z"},
		{2, "evil", "untrusted", "cairn plugins trust /ws/.cairn/plugins/cairn-plugin-evil", "", ""},
	} {
		r := rows[tc.i]
		if r.Name != tc.name || r.Trust != tc.trust || r.TrustHint != tc.hint || r.LastExit != tc.lastExit || r.NextAttempt != tc.nextTry {
			t.Errorf("row %d: %+v, want %+v", tc.i, r, tc)
		}
	}
	if len(rows) != 3 || rows[2].State != "not started" || rows[2].Status != "untrusted" {
		t.Fatalf("rows %+v", rows)
	}
	if got := pluginRows(health, nil); len(got) != 2 {
		t.Fatalf("without supervisor states: %d rows", len(got))
	}
}
