package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn project approval <slug> [off|on|strict]` (docs/decisions.md D45):
// whether a project's moves to done wait for a person, through the core
// area's project_approval tool.

// projectApproval is project_approval's answer.
type projectApproval struct {
	Project   string `json:"project"`
	Mode      string `json:"mode"`
	ChangedBy string `json:"changed_by"`
	ChangedAt string `json:"changed_at"`
}

// approvalModeHelp says what each mode does, for help and the printed
// answer.
var approvalModeHelp = map[string]string{
	"off":    "moves to done need no approval",
	"on":     "a move to done waits for a person's approval; the person at the agent's client may be asked",
	"strict": "a move to done waits for a person's approval in the dashboard or the CLI; the agent's client is never asked",
}

func newProjectApproval(configFile *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "approval <slug> [off|on|strict]",
		Short: "Show or set whether a project's moves to done need a person's approval",
		Long: `Without a mode, prints the project's approval mode. With one, sets it:
  off     ` + approvalModeHelp["off"] + `
  on      ` + approvalModeHelp["on"] + `
  strict  ` + approvalModeHelp["strict"] + `
People decide with ` + "`cairn task approve`" + ` or in the dashboard's Approvals page
(cairn ui --allow-actions); ` + "`cairn task approvals`" + ` lists what waits.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			slug := args[0]
			if !validSlug(slug) {
				return errs.Invalidf("slug", "pattern", "project slug %q must match ^[a-z0-9][a-z0-9-]{0,62}$ (lowercase letters, digits and dashes, starting with a letter or digit)", slug)
			}
			in := obj{"project": slug}
			mode := reads
			if len(args) == 2 {
				if _, ok := approvalModeHelp[args[1]]; !ok {
					return usageErr{msg: fmt.Sprintf("approval mode %q is not one of off, on, strict", args[1]), cmd: cmd.CommandPath()}
				}
				in["mode"], mode = args[1], writes
			}
			c, err := openAreas(cmd.Context(), *configFile, mode, "core")
			if err != nil {
				return err
			}
			defer c.close()
			var out projectApproval
			if _, err := c.call(cmd.Context(), "project_approval", in, &out); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s: approval %s (%s)\n", out.Project, out.Mode, approvalModeHelp[out.Mode])
			if out.ChangedBy != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "set by %s at %s\n", out.ChangedBy, out.ChangedAt)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
