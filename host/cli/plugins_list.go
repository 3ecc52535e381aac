package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// daemonPlugins is `cairn plugins` while a daemon serves the data dir: the
// daemon's plugins as they run, from its status. Plugins started beside it
// would find their stores held and answer "stopped, degraded".
func daemonPlugins(w io.Writer, p daemon.Paths, asJSON bool) error {
	welcome, err := daemon.Control(p, "status", 10*time.Second)
	if err != nil {
		return errs.Newf(503, errs.Unavailable, "the cairn daemon of %s did not answer its status: %v (`cairn stop` and retry to list the plugins without it)", p.DataDir, err)
	}
	var st DaemonStatus
	if err := json.Unmarshal(welcome.Status, &st); err != nil {
		return errs.Newf(502, errs.Internal, "the cairn daemon answered its status with %q: %v", welcome.Status, err)
	}
	if asJSON {
		return writeJSON(w, map[string]any{"plugins": st.Health.Plugins, "untrusted": st.Health.Untrusted, "problems": st.Health.Problems, "error": "", "daemon_pid": st.PID})
	}
	printPlugins(w, st.Health.Plugins, st.Health.Untrusted)
	return nil
}

// printPlugins writes the plugin table, the untrusted workspace plugins
// (D23) last with how to trust each.
func printPlugins(w io.Writer, plugins []systemtools.PluginHealth, untrusted []trust.Untrusted) {
	sort.Slice(plugins, func(i, j int) bool { return plugins[i].Name < plugins[j].Name })
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLUGIN\tVERSION\tSOURCE\tTRUST\tSTATE\tHEALTH\tTOOLS\tMESSAGE")
	for _, p := range plugins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", p.Name, p.Version, p.Source, trustColumn(p.Source), p.State, p.Status, p.Tools, p.Message)
	}
	for _, u := range untrusted {
		fmt.Fprintf(tw, "%s\t-\t%s\tuntrusted\tnot started\tdegraded\t0\t%s; to run it: %s\n", u.Name, untrustedSource(u), u.Reason, u.Command)
	}
	_ = tw.Flush()
}
