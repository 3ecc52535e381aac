package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newProject) }

// registered is one project registration: what the core area answered.
type registered struct {
	Slug      string `json:"slug"`
	CreatedAt string `json:"created_at"`
	// ViaDaemon says the running daemon's core area registered it.
	ViaDaemon bool `json:"-"`
}

// registerProjects registers slugs through the core area's project_register
// tool: in the running daemon, or in a host of the command's own.
func registerProjects(cmd *cobra.Command, configFlag string, slugs ...string) ([]registered, error) {
	c, err := openAreas(cmd.Context(), configFlag, writes, "core")
	if err != nil {
		return nil, err
	}
	defer c.close()
	var out []registered
	for _, slug := range slugs {
		p := registered{ViaDaemon: c.viaDaemon()}
		if _, err := c.call(cmd.Context(), "project_register", obj{"slug": slug}, &p); err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

func newProject() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Register and list the projects tasks are filed under, and set their approval",
		Long: `Register and list task projects through the core area's tools: in the
running daemon of the data dir when there is one, otherwise in the core area
started for the command.`,
	}
	cmd.PersistentFlags().StringVar(&configFile, "config", "", "config file")
	add := &cobra.Command{
		Use:   "add <slug> [<slug>...]",
		Short: "Register projects (slugs match ^[a-z0-9][a-z0-9-]{0,62}$)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, slug := range args {
				if !validSlug(slug) {
					return errs.Invalidf("slug", "pattern", "project slug %q must match ^[a-z0-9][a-z0-9-]{0,62}$ (lowercase letters, digits and dashes, starting with a letter or digit)", slug)
				}
			}
			done, err := registerProjects(cmd, configFile, args...)
			for _, p := range done {
				how := ""
				if p.ViaDaemon {
					how = " through the running daemon"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "project %s registered%s (since %s)\n", p.Slug, how, p.CreatedAt)
			}
			return err
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List registered projects",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := openAreas(cmd.Context(), configFile, reads, "core")
			if err != nil {
				return err
			}
			defer c.close()
			var out struct {
				Projects []struct {
					Slug      string `json:"slug"`
					CreatedAt string `json:"created_at"`
					State     string `json:"state,omitempty"`
				} `json:"projects"`
			}
			if _, err := c.call(cmd.Context(), "project_list", obj{}, &out); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out.Projects)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROJECT\tREGISTERED\tSTATE")
			for _, p := range out.Projects {
				state := p.State
				if state == "" {
					state = "active"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Slug, p.CreatedAt, state)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(add, list, newProjectApproval(&configFile))
	return cmd
}

// validSlug checks a project slug before any area starts (D7's pattern).
func validSlug(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0:
		default:
			return false
		}
	}
	return true
}
