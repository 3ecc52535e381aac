package cli

import (
	"encoding/json"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newStore) }

// copyingAreas are the areas `cairn store copy` moves, in order, with the
// internal tool each copies its own state with: the host never opens an
// area's store. Core goes first: a running server holds core.db for as
// long as it runs, so its refusal stops the copy before anything moved.
var copyingAreas = []struct{ area, tool string }{
	{"core", "core_store_copy"},
	{"admin", "admin_store_copy"},
	{"sdd", "sdd_store_copy"},
}

// copyReport is what `cairn store copy` prints: each area's own answer.
type copyReport struct {
	From  string                     `json:"from"`
	To    string                     `json:"to"`
	Areas map[string]json.RawMessage `json:"areas"`
}

func newStore() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Check a data dir's stores, or move its state into PostgreSQL",
	}
	cmd.AddCommand(newStoreCheck())
	var configFile, from, to string
	cp := &cobra.Command{
		Use:   "copy --from <data dir> --to postgres://…",
		Short: "Copy a data dir's core, admin and sdd state into an empty PostgreSQL database and verify it",
		Long: `Copies the state of a data dir (core.db, admin.db and the SDD state document)
into an empty PostgreSQL database, so servers started with CAIRN_STORE=<that
URL> serve the same tasks, chains, proofs, keys, webhooks and plans. Each area
copies its own state (the core area byte for byte, then verifies every task's
thought and event chain and recomputes every finalized audit session's Merkle
root on the target). Stop the servers of the data dir first: a store a running
server holds is refused. A database that already holds cairn data is refused.
Prints what each area copied and verified as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return errs.Invalidf("from", "required", "--from names the data dir to copy (for example ~/.local/share/cairn or <workspace>/.cairn/data)")
			}
			if !pgmigrate.IsPostgres(to) {
				return errs.Invalidf("to", "pattern", "--to must be a postgres:// or postgresql:// URL of an empty database")
			}
			abs, err := filepath.Abs(from)
			if err != nil {
				return errs.Invalidf("from", "path", "--from %q: %v", from, err)
			}
			// The copy reads stores no server writes: say so before
			// starting the areas, whose stores the daemon holds.
			if p := daemon.PathsFor(abs); daemonListens(p) {
				return errs.Conflictf(errs.Conflict, "a cairn daemon serves %s: end its sessions and run `cairn stop`, then `cairn store copy` again (the copy reads stores no server is writing)", abs)
			}
			names := make([]string, len(copyingAreas))
			for i, a := range copyingAreas {
				names[i] = a.area
			}
			// The areas start without opening any store (the read-only
			// migrations setting): each tool opens the source itself.
			h, shutdown, err := startHost(cmd.Context(), configFile, func(s *config.Settings) {
				onlyAreas(s, names)
				for _, n := range names {
					s.File.Plugins[n].Settings[pgmigrate.ReadOnlySetting] = pgmigrate.ReadOnly
				}
			})
			if err != nil {
				return err
			}
			defer shutdown()
			in, err := json.Marshal(kv.CopyInput{From: abs, To: to})
			if err != nil {
				return err
			}
			out := copyReport{From: abs, To: pgmigrate.Redact(to), Areas: map[string]json.RawMessage{}}
			for _, a := range copyingAreas {
				o := h.Server.OperatorCall(cmd.Context(), a.tool, in, operator())
				if o.Err != nil {
					e := errs.New(o.Status, o.Err.Code, "the "+a.area+" area did not copy: "+o.Err.Message)
					for k, v := range o.Err.Details {
						e.Details[k] = v
					}
					return e
				}
				out.Areas[a.area] = o.Output
			}
			return writeJSON(cmd.OutOrStdout(), out)
		},
	}
	cp.Flags().StringVar(&configFile, "config", "", "config file")
	cp.Flags().StringVar(&from, "from", "", "the data dir to copy (its servers stopped)")
	cp.Flags().StringVar(&to, "to", "", "postgres:// URL of the empty database to fill")
	cmd.AddCommand(cp)
	return cmd
}
