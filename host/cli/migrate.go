package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	adminstore "github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk/errs"
	pb "github.com/cairn-mcp/cairn/sdk/protocol/pluginv1"
)

func init() { register(newMigrate) }

// migratingAreas are the areas whose state CAIRN_STORE can put in
// PostgreSQL, with the health detail each reports its store under.
var migratingAreas = []struct {
	area, toolset, detail string
	steps                 []pgmigrate.Step
}{
	{adminstore.MigrationArea, "admin", "admin_db", adminstore.Migrations},
	{engine.MigrationArea, "sdd", "sdd", engine.Migrations},
}

func newMigrate() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply or show the PostgreSQL schema migrations of the admin and sdd areas",
		Long: `With CAIRN_STORE=postgres://… the admin and sdd areas keep their state in
PostgreSQL. Each area plugin applies its own pending migrations when it starts
(under an advisory lock, so servers starting together apply each step once);
'cairn migrate apply' starts those plugins, lets them migrate, and reports the
version each one runs. 'cairn migrate status' only reads the migration table
and lists what is applied and what is pending. bbolt stores need neither: they
upgrade themselves when opened.`,
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")

	apply := &cobra.Command{
		Use:   "apply",
		Short: "Start the admin and sdd plugins so each applies its pending migrations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := postgresSettings(configFile); err != nil {
				return err
			}
			h, shutdown, err := startHost(cmd.Context(), configFile, func(s *config.Settings) {
				s.Toolsets, _ = config.ParseToolsets("admin,sdd")
			})
			if err != nil {
				return err
			}
			defer shutdown()
			var out []pgmigrate.Status
			for _, p := range h.Plugins() {
				for _, a := range migratingAreas {
					if p.Name() != a.toolset {
						continue
					}
					st, err := reportedStatus(cmd.Context(), p.Health, a.detail)
					if err != nil {
						return errs.Newf(500, errs.InitFailed, "the %s plugin did not report its store: %v", a.toolset, err)
					}
					st.Area, st.Latest = a.area, len(a.steps)
					out = append(out, st)
				}
			}
			if len(out) != len(migratingAreas) {
				return errs.Newf(500, errs.InitFailed, "only %d of the %d area plugins started; see the log above", len(out), len(migratingAreas))
			}
			return printStatus(cmd.OutOrStdout(), out, asJSON)
		},
	}

	status := &cobra.Command{
		Use:   "status",
		Short: "List the applied and pending migrations of each area (changes nothing)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := postgresSettings(configFile)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
			if err != nil {
				return errs.Newf(503, errs.Unavailable, "%v", err)
			}
			defer pool.Close()
			var out []pgmigrate.Status
			for _, a := range migratingAreas {
				st, err := pgmigrate.Read(ctx, pool, a.area, a.steps)
				if err != nil {
					return errs.Newf(503, errs.Unavailable, "read the %s migrations: %v", a.area, err)
				}
				out = append(out, st)
			}
			return printStatus(cmd.OutOrStdout(), out, asJSON)
		},
	}
	cmd.AddCommand(apply, status)
	return cmd
}

// postgresSettings returns CAIRN_STORE, refusing bbolt with what to do.
func postgresSettings(configFile string) (string, error) {
	s, cleanup, err := settings(configFile)
	if err != nil {
		return "", err
	}
	cleanup()
	if s.Store == "" || s.TempDataDir {
		return "", errs.Newf(400, errs.ConfigInvalid, "CAIRN_STORE is bbolt (or the mode is TEST): there is nothing to migrate; bbolt stores upgrade themselves when opened. Set CAIRN_STORE=postgres://… to migrate a database")
	}
	return s.Store, nil
}

// reportedStatus reads the store kind and schema version an area plugin
// reports in its health details under key.
func reportedStatus(ctx context.Context, health func(context.Context) (*pb.HealthResponse, error), key string) (pgmigrate.Status, error) {
	var st pgmigrate.Status
	hr, err := health(ctx)
	if err != nil {
		return st, err
	}
	var details map[string]struct {
		Store         string `json:"store"`
		SchemaVersion int    `json:"schema_version"`
	}
	if err := json.Unmarshal(hr.Details, &details); err != nil {
		return st, fmt.Errorf("health details: %w", err)
	}
	d, ok := details[key]
	if !ok || d.Store != "postgres" {
		return st, fmt.Errorf("it reports store %q, not postgres", d.Store)
	}
	st.Version = d.SchemaVersion
	return st, nil
}

func printStatus(w io.Writer, out []pgmigrate.Status, asJSON bool) error {
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
