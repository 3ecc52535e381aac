package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/plugins/core"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newProject) }

// openCoreStore opens the core store of the configured data dir for a CLI
// command. A running server holds the store; say so instead of waiting.
func openCoreStore(configFlag string) (*store.Store, func(), error) {
	s, cleanup, err := settings(configFlag)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(filepath.Join(s.DataDir, core.StoreFile), store.Options{})
	if err != nil {
		cleanup()
		if e, ok := errs.As(err); ok {
			return nil, nil, errs.Newf(500, errs.InitFailed, "%s (a running `cairn serve` holds the store: stop it first, or register projects with CAIRN_PROJECT)", e.Message)
		}
		return nil, nil, err
	}
	return st, func() { _ = st.Close(); cleanup() }, nil
}

func newProject() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Register and list the projects tasks are filed under",
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	add := &cobra.Command{
		Use:   "add <slug> [<slug>...]",
		Short: "Register projects (slugs match ^[a-z0-9][a-z0-9-]{0,62}$)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, slug := range args {
				if !tasks.ValidProjectSlug(slug) {
					return errs.Invalidf("slug", "pattern", "project slug %q must match %s", slug, tasks.ProjectSlugPattern)
				}
			}
			// A running daemon holds the core store: announce the projects
			// on its bus, as the admin area does, and the core area
			// registers them.
			if p, err := configuredPaths(configFile); err == nil {
				if w, err := daemon.Control(p, "status", 5*time.Second); err == nil {
					for _, slug := range args {
						data, _ := json.Marshal(map[string]string{"slug": slug})
						if _, err := daemon.Send(p, daemon.Hello{Control: "publish", Event: core.ProjectCreatedEvent, Data: data}, 10*time.Second); err != nil {
							return err
						}
						fmt.Fprintf(cmd.OutOrStdout(), "project %s registered through the running daemon (pid %d)\n", slug, w.DaemonPID)
					}
					return nil
				}
			}
			st, done, err := openCoreStore(configFile)
			if err != nil {
				return err
			}
			defer done()
			svc := tasks.New(st, tasks.Config{})
			for _, slug := range args {
				p, err := svc.AddProject(slug)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "project %s registered (since %s)\n", p.Slug, p.CreatedAt)
			}
			return nil
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List registered projects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, done, err := openCoreStore(configFile)
			if err != nil {
				return err
			}
			defer done()
			projects, err := tasks.New(st, tasks.Config{}).ListProjects()
			if err != nil {
				return err
			}
			if asJSON {
				if projects == nil {
					projects = []tasks.Project{}
				}
				return writeJSON(cmd.OutOrStdout(), projects)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROJECT\tREGISTERED")
			for _, p := range projects {
				fmt.Fprintf(tw, "%s\t%s\n", p.Slug, p.CreatedAt)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(add, list)
	return cmd
}
