// Package cli is cairn's command line: serve, tools, plugins, version, and
// the hidden entry point that runs a built-in area as a plugin process.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/stdoutguard"
)

// Main runs the CLI and returns the process exit status; w is how it
// builds a host (cmd/cairn wires the root package's).
func Main(args []string, w Wiring) int {
	wiring = w
	// Built-in areas run as their own processes: the host re-executes this
	// binary (or cairn-areas beside it) with a hidden first argument.
	if status, served := builtin.ServeMain(args); served {
		return status
	}
	root := newRootFor(args)
	// `cairn --version` prints the version a release was built as, the
	// one its archive and bundle names carry (docs/deploy.md, Releases).
	root.Version = wiring.Version
	root.SetVersionTemplate("cairn {{.Version}}\n")
	root.SetArgs(args)
	root.SetOut(stdoutguard.Stdout())
	root.SetErr(os.Stderr)
	if err := root.Execute(); err != nil {
		return report(err)
	}
	return 0
}

// report prints an error and picks the exit status: 2 for command lines that
// cannot run and for configuration and start-up errors (docs/decisions.md D15), 1
// for refusals.
func report(err error) int {
	var quiet quietExit
	if errors.As(err, &quiet) {
		return int(quiet)
	}
	var u usageErr
	if errors.As(err, &u) {
		return reportUsage(os.Stderr, u.msg, u.cmd)
	}
	if e, ok := errs.As(err); ok {
		fmt.Fprintf(os.Stderr, "%s: %s\n", e.Code, e.Message)
		switch e.Code {
		case errs.InvalidMode, errs.ConfigInvalid, errs.InitFailed:
			return 2
		}
		return 1
	}
	if cobraUsage(err) {
		return reportUsage(os.Stderr, err.Error(), "")
	}
	fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
	return 1
}

// quietExit ends a command with a status and nothing more to say: the
// command printed its answer already (`cairn status` with no daemon: 3).
type quietExit int

func (q quietExit) Error() string { return fmt.Sprintf("exit status %d", int(q)) }

// exitNotRunning is `cairn status`'s answer when no daemon runs, as service
// managers answer "not running" (3), apart from errors (1) and bad command
// lines (2).
const exitNotRunning quietExit = 3

func envTable() string {
	var b strings.Builder
	b.WriteString("Environment:\n")
	for _, v := range config.Vars {
		def := v.Default
		if def == "" {
			def = "unset"
		}
		fmt.Fprintf(&b, "  %s (default: %s)\n      %s\n", v.Name, def, v.Meaning)
	}
	return b.String()
}

func newRoot() *cobra.Command {
	cmds := []*cobra.Command{serves(newServe()), newVersion(), newTools(), newPlugins()}
	for _, f := range extraCommands {
		cmds = append(cmds, f())
	}
	return newRootWith(cmds...)
}

// newRootFor is the command tree that runs args. `cairn serve`, which
// every agent session starts, gets a tree of that command alone: the
// others are generated from some eighty tools' schemas, a millisecond of
// its cold start (docs/decisions.md D46).
func newRootFor(args []string) *cobra.Command {
	if len(args) > 0 && args[0] == "serve" {
		return newRootWith(serves(newServe()))
	}
	return newRoot()
}

// newRootWith is the root command over the top-level commands cmds.
func newRootWith(cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "cairn",
		Short: "cairn: an MCP tool server for coding agents",
		Long: `cairn is an MCP tool server for coding agents: a strict task pipeline, a
tamper-evident decision trail with Merkle proofs, a live skill registry, a
spec-driven development workflow, administration with signed webhooks, and
vision and computer use. Each area runs as its own plugin process.

Add it to Claude Code with:
  claude mcp add cairn -- cairn serve`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(cmds...)
	// The environment is told once, at the top: a subcommand's help shows
	// its own flags.
	help := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		help(c, args)
		if c == root {
			fmt.Fprint(c.OutOrStdout(), "\n"+envTable())
		}
	})
	addVerbose(root)
	strictUsage(root)
	return root
}

// extraCommands are added by the area command files of this package
// (project, init, audit, admin, ...) from their init functions, so each
// area's commands live in their own file.
var extraCommands []func() *cobra.Command

// register adds a top-level command.
func register(f func() *cobra.Command) { extraCommands = append(extraCommands, f) }

func newLogger(s config.Settings) hclog.Logger {
	level := hclog.LevelFromString(s.LogLevel)
	if s.LogLevel == "off" {
		level = hclog.Off
	}
	// An intercept logger, so the host can send warnings to its sessions.
	l := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name: "cairn", Output: os.Stderr, Level: level, JSONFormat: s.LogFormat == "json",
	})
	routeLibraryLogs(l)
	return l
}

// settings resolves the configuration; TEST mode gets a temporary data dir
// that cleanup removes.
func settings(configFlag string) (config.Settings, func(), error) {
	cwd, err := os.Getwd()
	if err != nil {
		return config.Settings{}, nil, errs.Newf(400, errs.ConfigInvalid, "cannot read the working directory: %v", err)
	}
	s, err := config.Resolve(os.LookupEnv, cwd, configFlag)
	if err != nil {
		return s, nil, err
	}
	s.LogLevel = quietLevel(s.LogLevel)
	cleanup := func() {}
	if s.Mode == config.ModeTest {
		dir, err := os.MkdirTemp("", "cairn-test-")
		if err != nil {
			return s, nil, errs.Newf(500, errs.InitFailed, "TEST mode: cannot create a temporary data dir: %v", err)
		}
		s.DataDir, s.TempDataDir = dir, true
		cleanup = func() { _ = os.RemoveAll(dir) }
	}
	return s, cleanup, nil
}

// reloadOnHUP re-reads the config whenever the process gets SIGHUP, until
// the returned function is called.
func reloadOnHUP(h *Host) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = h.Reload(context.Background())
		}
	}()
	return func() { signal.Stop(hup); close(hup) }
}

// startHost resolves settings and starts a host with its plugins.
func startHost(ctx context.Context, configFlag string, tweak func(*config.Settings)) (*Host, func(), error) {
	s, cleanup, err := settings(configFlag)
	if err != nil {
		return nil, nil, err
	}
	if tweak != nil {
		tweak(&s)
	}
	h, err := newHost(s)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := h.Start(ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	return h, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		h.Shutdown(sctx)
		cleanup()
		if s.TempDataDir {
			_ = os.RemoveAll(s.DataDir)
		}
	}, nil
}

func newServe() *cobra.Command {
	var httpAddr, configFile string
	var noDaemon, noAuth bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio (default) or streamable HTTP",
		Long: `Serve MCP. With no flags cairn speaks MCP JSON-RPC on stdin/stdout, as agent
hosts such as Claude Code expect; logs go to stderr. With --http it serves
streamable HTTP at http://ADDR/mcp to any number of concurrent sessions; every
request must carry an API key of the admin area (Authorization: Bearer
cairn_…), whose user becomes the caller and whose rate limits apply.
--no-auth drops the key requirement, for loopback addresses only.

cairn runs one server per data dir, shared by every agent host on the
machine: serve finds the running daemon (a Unix socket in the data dir) or
starts one. Over stdio it relays its session to the daemon; with --http it
asks the daemon to open the HTTP listener, prints its URL on stderr and holds
it open until this command ends. The daemon owns the plugins and the stores
and exits CAIRN_DAEMON_IDLE (default 5m) after its last session or listener.
--no-daemon (or CAIRN_DAEMON=off) serves in this process instead, and is
refused while a daemon serves the data dir; TEST mode never uses the daemon.
'cairn status' and 'cairn stop' manage the daemon.

SIGHUP re-reads the config file and restarts the plugins whose binary or
settings changed. SIGINT and SIGTERM stop cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if httpAddr != "" {
				if err := httpserve.CheckHTTPAddr(httpAddr, !noAuth); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			if served, err := serveThroughDaemon(ctx, s, configFile, httpAddr, noDaemon, noAuth); served || err != nil {
				return err
			}
			defer startTracing("cairn")()
			// One stdio session is answered once the plugins its
			// toolsets need are up; HTTP requests choose their own
			// toolsets, so HTTP waits for every plugin.
			h, shutdown, err := startHost(ctx, configFile, func(s *config.Settings) { s.OneSession = httpAddr == "" })
			if err != nil {
				return err
			}
			defer shutdown()
			defer reloadOnHUP(h)()
			if httpAddr != "" {
				if !noAuth {
					// Keys are checked by the area that owns them, through
					// the plugin protocol: swap the admin area and
					// authentication follows it.
					auth, err := h.Server.PluginAuthenticator()
					if err != nil {
						return err
					}
					h.Server.SetAuthenticator(auth)
				}
				return h.Server.ServeHTTP(ctx, httpAddr, nil)
			}
			return h.Server.ServeStdio(ctx, os.Stdin, stdoutguard.Stdout())
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio")
	cmd.Flags().StringVar(&configFile, "config", "", "config file (default $CAIRN_CONFIG or <root>/.cairn/config.yaml)")
	cmd.Flags().BoolVar(&noDaemon, "no-daemon", false, "serve in this process instead of through the shared daemon (refused while one runs)")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "with --http on a loopback address: serve without API keys")
	return cmd
}

func newVersion() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the cairn version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]any{"version": wiring.Version, "sdk": sdk.Version, "protocol": 1, "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cairn %s (sdk %s, plugin protocol 1, %s %s/%s)\n", wiring.Version, sdk.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newTools() *cobra.Command {
	var markdown, asJSON, all bool
	var out, configFile string
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the registered tools (--markdown writes the tool reference)",
		Long: `Start the plugins, list their tools and stop. By default only the tools the
current mode and toolsets expose are listed; --all lists every toolset.
--markdown writes the tool reference generated from the registered schemas
to docs/tools.md (or --out).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, shutdown, err := startHost(cmd.Context(), configFile, func(s *config.Settings) {
				if all || markdown {
					s.Toolsets.All = true
				}
				// Describing tools must not touch (or wait for) the real
				// stores, which a running server holds locked.
				if !s.TempDataDir {
					if dir, err := os.MkdirTemp("", "cairn-tools-"); err == nil {
						s.DataDir, s.TempDataDir = dir, true
					}
				}
			})
			if err != nil {
				return err
			}
			defer shutdown()
			tools := h.Catalog.VisibleTools()
			switch {
			case markdown:
				path := out
				if path == "" {
					path = "docs/tools.md"
				}
				if err := os.WriteFile(path, []byte(ToolsMarkdown(tools)), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d tools to %s\n", len(tools), path)
				return nil
			case asJSON:
				var list []map[string]any
				for _, t := range tools {
					list = append(list, map[string]any{
						"name": t.Name, "title": t.Title, "description": t.Description, "toolset": t.Toolset, "plugin": t.Owner,
						"inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "successSchema": t.SuccessSchema,
						"annotations": map[string]bool{"readOnlyHint": t.ReadOnly, "destructiveHint": t.Destructive, "idempotentHint": t.Idempotent, "openWorldHint": t.OpenWorld},
					})
				}
				return writeJSON(cmd.OutOrStdout(), list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tTOOLSET\tPLUGIN\tREAD-ONLY\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", t.Name, t.Toolset, t.Owner, t.ReadOnly, firstSentence(t.Description))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "write the Markdown tool reference (all toolsets)")
	cmd.Flags().StringVar(&out, "out", "", "output path for --markdown (default docs/tools.md)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print tools with their schemas as JSON")
	cmd.Flags().BoolVar(&all, "all", false, "list every toolset, not only the exposed ones")
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	return cmd
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func newPlugins() *cobra.Command {
	var asJSON bool
	var configFile string
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List discovered plugins with their versions and health",
		Long: `List the plugins of this workspace with their versions, trust and health.
While a daemon serves the data dir it lists the daemon's plugins as they run
there (the daemon holds the stores, so plugins started beside it could not
open them); otherwise it starts them, asks each for its health and stops
them. Exits 0, or with the start-up error of a required plugin that does not
start (2) when no daemon serves.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			defer cleanup()
			if p := daemon.PathsFor(s.DataDir); !s.TempDataDir && daemonListens(p) {
				return daemonPlugins(cmd.OutOrStdout(), p, asJSON)
			}
			h, err := newHost(s)
			if err != nil {
				return err
			}
			// Optional plugins that fail are reported, not fatal; a
			// failing required one is the answer the operator needs.
			startErr := h.Start(cmd.Context())
			defer h.Shutdown(context.Background())
			health := h.System.Health(cmd.Context())
			untrusted := h.Fleet.Untrusted()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"plugins": health.Plugins, "untrusted": untrusted, "problems": health.Problems, "error": errString(startErr)})
			}
			printPlugins(cmd.OutOrStdout(), health.Plugins, untrusted)
			if startErr != nil {
				return startErr
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	for _, f := range pluginSubcommands {
		cmd.AddCommand(f())
	}
	return cmd
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
