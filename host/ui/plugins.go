package ui

import (
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/host/trust"
)

// PluginStates is what the system page needs from the supervisor beyond
// server_health: each plugin's last exit and next attempt, and the
// workspace plugins left out because the operator has not trusted them.
type PluginStates func() ([]supervisor.Status, []trust.Untrusted)

// pluginRow is one line of the system page's plugin table.
type pluginRow struct {
	systemtools.PluginHealth
	Trust       string // built in, trusted, or untrusted
	TrustHint   string // the command that trusts an untrusted one
	Path        string
	LastExit    string
	NextAttempt string
}

// pluginRows joins server_health's plugin lines with the supervisor's
// snapshots, and lists the untrusted plugins after the ones that run. A
// plugin that is not built in and runs was admitted: by the trust store when
// the workspace named it, or by the operator's own config.
func pluginRows(health []systemtools.PluginHealth, states PluginStates) []pluginRow {
	var sts []supervisor.Status
	var untrusted []trust.Untrusted
	if states != nil {
		sts, untrusted = states()
	}
	byName := map[string]supervisor.Status{}
	for _, st := range sts {
		byName[st.Name] = st
	}
	rows := make([]pluginRow, 0, len(health)+len(untrusted))
	for _, h := range health {
		r := pluginRow{PluginHealth: h, Trust: "trusted"}
		if h.Source == "builtin" {
			r.Trust = "built in"
		}
		if st, ok := byName[h.Name]; ok {
			r.Path, r.LastExit, r.NextAttempt = st.Path, st.LastExit, st.NextAttempt
		}
		rows = append(rows, r)
	}
	for _, u := range untrusted {
		rows = append(rows, pluginRow{
			PluginHealth: systemtools.PluginHealth{Name: u.Name, Source: u.Origin, State: "not started", Status: "untrusted", Message: u.Reason},
			Trust:        "untrusted", TrustHint: u.Command, Path: u.Path,
		})
	}
	return rows
}
