package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/internal/datadir"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/skills"
)

func init() { register(newInit) }

func newInit() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install cairn's canonical skills into <root>/.agents/skills and make the data dir",
		Long: `Copy the canonical cairn-* skills into <root>/.agents/skills, where
skill_list and your agent find them. Files you edited are kept, never
overwritten; running init again only adds what is missing.

It also makes the data dir (<root>/.cairn/data unless CAIRN_DATA_DIR says
otherwise) and keeps it out of git: a .cairn folder cairn creates holds a
.gitignore of "*", and an existing data dir git would track gets one of its
own. The data dir holds the private audit signing key and the stores; when
git tracks a file there already, init (and cairn status) says so on stderr,
naming the files.`,
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
			if !s.TempDataDir {
				if err := datadir.Make(s.DataDir, 0o700); err != nil {
					return errs.Newf(500, errs.InitFailed, "cannot create the data directory %s: %v", s.DataDir, err)
				}
				if err := ignoreDataDir(s); err != nil {
					return errs.Newf(500, errs.InitFailed, "cannot write a .gitignore into the data directory %s: %v", s.DataDir, err)
				}
			}
			warnTracked(cmd.ErrOrStderr(), s)
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
