package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/cluster"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newMigrate) }

// migratingAreas are the areas whose state CAIRN_STORE can put in
// PostgreSQL, with the internal tool each answers its migration state with:
// the host asks the area, it never reads an area's tables itself.
var migratingAreas = []struct{ area, tool string }{
	{"core", "core_store_migrations"},
	{"admin", "admin_store_migrations"},
	{"sdd", "sdd_store_migrations"},
}

func newMigrate() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply or show the PostgreSQL schema migrations of the core, admin and sdd areas and the host",
		Long: `With CAIRN_STORE=postgres://… the core, admin and sdd areas keep their state in
PostgreSQL, and the host keeps its own tables there (the cluster's event bus
and the HTTP sessions every server can continue). Each area plugin applies its
own pending migrations when it starts, the host its own when it serves (under
an advisory lock, so servers starting together apply each step once);
'cairn migrate apply' starts those plugins, lets them migrate, applies the
host's steps, and reports the version each one runs. 'cairn migrate status'
starts them without opening their stores, so nothing is applied, and each
lists from the migration table what is applied and what is pending. bbolt
stores need neither: they upgrade themselves when opened.`,
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")

	// report runs the areas, migrating or read-only, and prints what they
	// answer.
	report := func(readOnly bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			if err := requirePostgres(configFile); err != nil {
				return err
			}
			out, err := areaMigrations(cmd.Context(), configFile, readOnly)
			if err != nil {
				return err
			}
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			own, err := cluster.StoreMigrations(cmd.Context(), s.Store, !readOnly)
			if err != nil {
				return err
			}
			out = append(out, own)
			return printStatus(cmd.OutOrStdout(), out, asJSON)
		}
	}
	apply := &cobra.Command{
		Use:   "apply",
		Short: "Start the core, admin and sdd plugins so each applies its pending migrations, then the host's",
		Args:  cobra.NoArgs,
		RunE:  report(false),
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "List the applied and pending migrations of each area (changes nothing)",
		Args:  cobra.NoArgs,
		RunE:  report(true),
	}
	cmd.AddCommand(apply, status)
	return cmd
}

// requirePostgres refuses bbolt with what to do.
func requirePostgres(configFile string) error {
	s, cleanup, err := settings(configFile)
	if err != nil {
		return err
	}
	cleanup()
	if s.Store == "" || s.TempDataDir {
		return errs.Newf(400, errs.ConfigInvalid, "CAIRN_STORE is bbolt (or the mode is TEST): there is nothing to migrate; bbolt stores upgrade themselves when opened. Set CAIRN_STORE=postgres://… to migrate a database")
	}
	return nil
}

// areaMigrations starts the core, admin and sdd areas (or their replacements
// from the config file) for one command and asks each for its store's
// migration state. Started normally, each applies its pending migrations
// first (apply); with readOnly, each opens no store and applies nothing
// (status).
func areaMigrations(ctx context.Context, configFile string, readOnly bool) ([]pgmigrate.StoreStatus, error) {
	names := make([]string, len(migratingAreas))
	for i, a := range migratingAreas {
		names[i] = a.area
	}
	h, shutdown, err := startHost(ctx, configFile, func(s *config.Settings) {
		onlyAreas(s, names)
		if readOnly {
			for _, n := range names {
				s.File.Plugins[n].Settings[pgmigrate.ReadOnlySetting] = pgmigrate.ReadOnly
			}
		}
	})
	if err != nil {
		return nil, err
	}
	defer shutdown()
	var out []pgmigrate.StoreStatus
	for _, a := range migratingAreas {
		o := h.Server.OperatorCall(ctx, a.tool, json.RawMessage("{}"), operator())
		if o.Err != nil {
			return nil, errs.Newf(o.Status, o.Err.Code, "the %s area did not report its migrations: %s", a.area, o.Err.Message)
		}
		var st pgmigrate.StoreStatus
		if err := json.Unmarshal(o.Output, &st); err != nil {
			return nil, errs.Newf(502, errs.ToolOutputMalformed, "%s answered %s: %v", a.tool, o.Output, err)
		}
		if st.Store != "postgres" {
			return nil, errs.Newf(500, errs.InitFailed, "the %s area keeps its state in %q, not PostgreSQL: does its plugin see CAIRN_STORE (a plugin that is not built in gets it through the config's env)?", a.area, st.Store)
		}
		out = append(out, st)
	}
	return out, nil
}

func printStatus(w io.Writer, out []pgmigrate.StoreStatus, asJSON bool) error {
	if asJSON {
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AREA\tVERSION\tLATEST\tPENDING")
	for _, s := range out {
		pending := "none"
		if len(s.Pending) > 0 {
			pending = fmt.Sprint(s.Pending)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", s.Area, s.Version, s.Latest, pending)
	}
	return tw.Flush()
}
