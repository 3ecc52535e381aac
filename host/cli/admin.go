package cli

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// `cairn admin …` is generated from the admin area's tools (package
// toolcmd): each verb is one tool, its flags the tool's input properties.
// The files admin_*_call.go say, per group, which tool each verb calls and
// how its output reads as a table.

func init() { register(newAdmin) }

// adminToolsJSON is the admin tools' declarations the commands are made
// from: name, title, description, input schema, read-only hint. It is a
// copy of the area's committed tool snapshots
// (plugins/admin/testdata/toolsnaps), which the area's own test holds to
// its code; TestEmbeddedToolsMatchSnapshots holds this copy to them
// (UPDATE_CLI_TOOLS=1 rewrites it). Embedded, it makes `cairn admin …
// --help` need neither a store nor a running area.
//
//go:embed admin_tools.json
var adminToolsJSON []byte

// adminTools is the embedded inventory, read once.
var adminTools = sync.OnceValue(func() toolcmd.Inventory { return inventoryOf("admin_tools.json", adminToolsJSON) })

// adminFlagNames are the flags whose name is not their property's
// kebab-case spelling: the names the admin CLI has always had, which
// scripts and docs use. The kebab-case spelling (--user-id) works too.
var adminFlagNames = map[string]string{
	"user_id":      "user",
	"org_id":       "org",
	"workspace_id": "workspace",
	"owner_id":     "owner",
	"scopes":       "scope",
	"permissions":  "permission",
	"event_types":  "event",
	"event_type":   "event",
	// A webhook's delivery config; --config is the config file's.
	"config": "delivery-config",
}

// operator is the identity the CLI records as the actor of its calls.
func operator() string {
	if id := os.Getenv("CAIRN_AGENT_ID"); id != "" {
		return id
	}
	if u := os.Getenv("USER"); u != "" {
		return "operator:" + u
	}
	return "operator"
}

// obj is a tool's JSON output or arguments, read by the tables.
type obj = map[string]any

// adminBuilder makes the admin commands (areaBuilder).
func adminBuilder(f *areaFlags) toolcmd.Builder {
	return areaBuilder("admin", adminTools(), adminFlagNames, f)
}

func newAdmin() *cobra.Command {
	f := &areaFlags{}
	b := adminBuilder(f)
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Administer API keys, workspaces, members, invitations, projects and webhooks",
		Long: `Operator administration of the admin area (Area B). Every command calls the
admin area's tools as the local operator, who holds every right: through the
running daemon of the data dir when there is one, otherwise by starting the
admin area (built in, or the replacement the config file names) for the
command. Tables by default, --json for the tool's output. Events these
commands cause (api_key.*, workspace.*, project.created, ...) reach webhooks
and the other areas through the daemon at once, or when the next server
starts. Exit status: 0 done, 1 refused (the message says why and what to do),
2 a command line that cannot run.`,
	}
	cmd.PersistentFlags().StringVar(&f.config, "config", "", "config file")
	cmd.PersistentFlags().BoolVar(&f.json, "json", false, "print JSON")
	cmd.AddCommand(adminKeys(b), adminWorkspaces(b), adminMembers(b), adminInvitations(b), adminProjects(b, f), adminWebhooks(b))
	return cmd
}

// usageAt is a command line that cannot run, pointing at cmd's help.
func usageAt(cmd *cobra.Command, format string, args ...any) error {
	return usageErr{msg: fmt.Sprintf(format, args...), cmd: cmd.CommandPath()}
}

// nothingToChange refuses an update that names no change, listing what it
// could change.
func nothingToChange(inv *toolcmd.Invocation, group, id string) error {
	if len(inv.In) > 1 {
		return nil
	}
	var flags []string
	inv.Cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			flags = append(flags, "--"+f.Name)
		}
	})
	sort.Strings(flags)
	return usageAt(inv.Cmd, "%s update %s: name something to change (%s)", group, id, strings.Join(flags, ", "))
}

// positive refuses a numeric flag the user set to zero or less.
func positive(cmd *cobra.Command, flags ...string) error {
	for _, name := range flags {
		if !cmd.Flags().Changed(name) {
			continue
		}
		if v, _ := cmd.Flags().GetInt64(name); v <= 0 {
			return usageAt(cmd, "--%s must be a positive number of requests (got %d)", name, v)
		}
	}
	return nil
}

// str reads a dotted path of v as table text ("-" when absent or null).
func str(v obj, path string) string {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(obj)
		if !ok {
			return "-"
		}
		cur = m[k]
	}
	return toolcmd.Text(cur)
}

// items reads the list at key of v.
func items(v obj, key string) []obj {
	list, _ := v[key].([]any)
	out := make([]obj, 0, len(list))
	for _, x := range list {
		if m, ok := x.(obj); ok {
			out = append(out, m)
		}
	}
	return out
}

// columns prints a header and one row per item, each cell a dotted path.
func columns(header string, paths ...string) func(w io.Writer, rows ...obj) {
	return func(w io.Writer, rows ...obj) {
		fmt.Fprintln(w, header)
		for _, r := range rows {
			cells := make([]string, len(paths))
			for i, p := range paths {
				cells[i] = str(r, p)
			}
			fmt.Fprintln(w, strings.Join(cells, "\t"))
		}
	}
}

// one shows a single object; list shows the list at key.
func one(cols func(io.Writer, ...obj)) func(io.Writer, obj, obj) {
	return func(w io.Writer, v, _ obj) { cols(w, v) }
}

func list(cols func(io.Writer, ...obj), key string) func(io.Writer, obj, obj) {
	return func(w io.Writer, v, _ obj) { cols(w, items(v, key)...) }
}

// zero shows an omitted count as 0.
func zero(s string) string {
	if s == "-" {
		return "0"
	}
	return s
}
