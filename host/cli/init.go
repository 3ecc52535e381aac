package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/skills"
)

func init() { register(newInit) }

func newInit() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install cairn's canonical skills into <root>/.agents/skills",
		Long: `Copy the 24 canonical cairn-* skills into <root>/.agents/skills, where
skill_list and your agent find them. Files you edited are kept, never
overwritten; running init again only adds what is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, cleanup, err := settings("")
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := skills.Install(skills.FS, s.Root)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "skills in %s/.agents/skills: %s\n", s.Root, rep)
			for _, k := range rep.Kept {
				fmt.Fprintf(cmd.OutOrStdout(), "  kept your edited %s\n", k)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
