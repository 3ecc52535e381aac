package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() { register(newAdmin) }

type adminFlags struct {
	config string
	json   bool
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

// obj is a tool's JSON output, read by the tables.
type obj = map[string]any

// verb is one admin subcommand's body: it calls the admin area's tools and
// returns the output to print (--json) and the table that shows it.
type verb func(cmd *cobra.Command, args []string, c *areaClient) (out json.RawMessage, table func(w io.Writer, v obj), err error)

// run wraps a verb: connect to the admin area, run, print JSON or a table.
func run(f *adminFlags, mode access, body verb) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := openAreas(cmd.Context(), f.config, mode, "admin")
		if err != nil {
			return err
		}
		defer c.close()
		out, table, err := body(cmd, args, c)
		if u, ok := err.(usageErr); ok && u.cmd == "" {
			u.cmd = cmd.CommandPath()
			return u
		}
		if err != nil {
			return err
		}
		return printOutput(cmd.OutOrStdout(), f.json, out, table)
	}
}

// printOutput prints a tool's output as JSON or through its table.
func printOutput(w io.Writer, asJSON bool, out json.RawMessage, table func(io.Writer, obj)) error {
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return errs.Newf(502, errs.ToolOutputMalformed, "the admin area answered %q: %v", out, err)
	}
	if asJSON || table == nil {
		return writeJSON(w, v)
	}
	m, _ := v.(obj)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	table(tw, m)
	return tw.Flush()
}

// simpleCall is a verb that calls one tool with the args built from the
// command line.
func simpleCall(tool string, build func(cmd *cobra.Command, args []string) (obj, error), table func(io.Writer, obj)) verb {
	return func(cmd *cobra.Command, args []string, c *areaClient) (json.RawMessage, func(io.Writer, obj), error) {
		in, err := build(cmd, args)
		if err != nil {
			return nil, nil, err
		}
		out, err := c.call(cmd.Context(), tool, in, nil)
		return out, table, err
	}
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
	switch x := cur.(type) {
	case nil:
		return "-"
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ",")
	case obj:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
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
func one(cols func(io.Writer, ...obj)) func(io.Writer, obj) {
	return func(w io.Writer, v obj) { cols(w, v) }
}

func list(cols func(io.Writer, ...obj), key string) func(io.Writer, obj) {
	return func(w io.Writer, v obj) { cols(w, items(v, key)...) }
}

// id builds the args of a tool that takes one id from the first argument.
func id(field string) func(*cobra.Command, []string) (obj, error) {
	return func(_ *cobra.Command, args []string) (obj, error) { return obj{field: args[0]}, nil }
}

// set copies the flags the user gave into in under their tool field names.
func set(cmd *cobra.Command, in obj, fields map[string]string) {
	for flag, field := range fields {
		if !cmd.Flags().Changed(flag) {
			continue
		}
		fl := cmd.Flags().Lookup(flag)
		switch fl.Value.Type() {
		case "stringSlice":
			v, _ := cmd.Flags().GetStringSlice(flag)
			in[field] = v
		case "int":
			v, _ := cmd.Flags().GetInt(flag)
			in[field] = v
		default:
			in[field] = fl.Value.String()
		}
	}
}

// positive refuses a numeric flag the user set to zero or less.
func positive(cmd *cobra.Command, flags ...string) error {
	for _, name := range flags {
		if !cmd.Flags().Changed(name) {
			continue
		}
		if v, _ := cmd.Flags().GetInt(name); v <= 0 {
			return usagef("--%s must be a positive number of requests (got %d)", name, v)
		}
	}
	return nil
}

func newAdmin() *cobra.Command {
	f := &adminFlags{}
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
	cmd.AddCommand(adminKeys(f), adminWorkspaces(f), adminMembers(f), adminInvitations(f), adminProjects(f), adminWebhooks(f))
	return cmd
}
