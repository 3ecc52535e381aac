package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/host/transport/stdio"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() {
	register(func() *cobra.Command { return serves(newDaemon()) })
	register(newStatus)
	register(newStop)
}

// daemonArg is the hidden command the relay starts the daemon with.
const daemonArg = "__daemon"

// DefaultDaemonIdle is how long a daemon with no session waits before it
// exits; CAIRN_DAEMON_IDLE overrides it.
const DefaultDaemonIdle = 5 * time.Minute

// connectTimeout bounds finding or starting the daemon.
const connectTimeout = 60 * time.Second

// useDaemon reports whether a stdio `cairn serve` relays to the shared
// daemon: yes unless turned off, in TEST mode, whose store is private to
// one process by definition, or in MINIMAL mode, which runs no plugin.
func useDaemon(noDaemon bool, s config.Settings) bool {
	if noDaemon || s.Mode == config.ModeTest || s.Mode == config.ModeMinimal {
		return false
	}
	switch strings.ToLower(os.Getenv("CAIRN_DAEMON")) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// relay finds or starts the daemon of the configured data dir and relays
// this process's stdio session to it, carrying the session's own settings
// (D21). When the daemon dies the relay starts a fresh one and resumes the
// session; it gives up only after repeated failed starts.
func relay(ctx context.Context, s config.Settings, configFile string, stdin io.Reader, stdout io.Writer) error {
	defer startTracing("cairn-relay")()
	p := daemon.PathsFor(s.DataDir)
	hello := sessionHello(s)
	defer forwardHUP(p)()
	maxMessage, err := relayMaxMessage()
	if err != nil {
		return err
	}
	err = daemon.RunRelay(ctx, daemon.RelayConfig{
		Paths: p, Hello: hello, Timeout: connectTimeout, Stderr: os.Stderr, MaxMessage: maxMessage,
		Start: func() (func() (bool, error), error) { return startDaemon(p, configFile) },
	}, stdin, stdout)
	if errors.Is(err, daemon.ErrRefused) {
		return refusal(err)
	}
	var se *daemon.StartError
	if errors.As(err, &se) {
		// The daemon's own start-up error, one line, as a server of this
		// process would have printed it.
		if code, text, ok := strings.Cut(se.Line, ": "); ok && strings.HasPrefix(code, "ERR_") {
			return errs.New(500, code, text)
		}
		return errs.New(500, errs.InitFailed, se.Line)
	}
	if err != nil {
		return errs.Newf(500, errs.InitFailed, "%v (run with --no-daemon to serve without the shared daemon)", err)
	}
	return nil
}

// sessionHello carries a command's own session settings (D21) to the
// daemon.
func sessionHello(s config.Settings) daemon.Hello {
	toolsets := ""
	if s.Toolsets.Explicit {
		toolsets = s.Toolsets.String()
	}
	return daemon.Hello{
		AgentID: s.AgentID, ClientPID: os.Getpid(), Mode: s.Mode, Toolsets: toolsets,
		ToolsetsSet: s.Toolsets.Explicit, Project: s.Project, Root: s.Root, Warnings: s.Warnings,
	}
}

// forwardHUP makes SIGHUP to this process reload the daemon's
// configuration, as it would reload a server running in this process. The
// returned function stops forwarding.
func forwardHUP(p daemon.Paths) func() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			if _, err := daemon.Control(p, "reload", 10*time.Second); err != nil {
				fmt.Fprintf(os.Stderr, "cairn: reload: %v\n", err)
			}
		}
	}()
	return func() { signal.Stop(hup); close(hup) }
}

// refusal turns the daemon's refusal (daemon.ErrRefused: "ERR_CODE:
// text") into the typed error a server of its own would have returned.
func refusal(err error) error {
	msg := strings.TrimPrefix(err.Error(), daemon.ErrRefused.Error()+": ")
	if code, text, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(code, "ERR_") {
		return errs.New(400, code, text)
	}
	return errs.New(400, errs.ConfigInvalid, msg)
}

// relayMaxMessage is the relay's bound on one client message.
func relayMaxMessage() (int, error) {
	v := os.Getenv("CAIRN_MAX_MESSAGE")
	if v == "" {
		return clientsession.DefaultMaxMessage, nil
	}
	return clientsession.ParseMessageLimit(v)
}

// sessionEnv are the settings that belong to a session, not to the daemon
// (D21): a daemon started by one session must not take them for everyone.
var sessionEnv = []string{"CAIRN_AGENT_ID=", "CAIRN_PROJECT=", "CAIRN_TOOLSETS=", "CAIRN_MODE="}

// startDaemon launches `cairn __daemon` detached from this session: its own
// session id (a terminal's hangup must not reach it), stdin and stdout on
// /dev/null, stderr appended to daemon.log. The session's own settings stay
// behind (sessionEnv): they travel in each relay's Hello.
func startDaemon(p daemon.Paths, configFile string) (func() (bool, error), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(p.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	// Where this daemon's lines start in the shared log: a daemon that
	// exits during start-up is reported with its own error line.
	logStart, _ := logf.Seek(0, io.SeekEnd)
	args := []string{daemonArg}
	if configFile != "" {
		args = append(args, "--config", configFile)
	}
	cmd := exec.Command(exe, args...)
	for _, kv := range os.Environ() {
		own := false
		for _, prefix := range sessionEnv {
			own = own || strings.HasPrefix(kv, prefix)
		}
		if !own {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the cairn daemon: %w", err)
	}
	var mu sync.Mutex
	var done bool
	var werr error
	// Reap the daemon if it exits while we live, and tell Connect.
	go func() {
		err := cmd.Wait()
		mu.Lock()
		done, werr = true, err
		mu.Unlock()
	}()
	return func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if done && werr != nil {
			if line := startFailure(p.Log, logStart); line != "" {
				return true, &daemon.StartError{Line: line}
			}
		}
		return done, werr
	}, nil
}

// startFailure is the last error line ("ERR_CODE: text", as report prints
// it) a daemon wrote to its log from offset on; "" when there is none.
func startFailure(log string, offset int64) string {
	f, err := os.Open(log)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, err := io.ReadAll(io.LimitReader(f, 4<<20))
	if err != nil {
		return ""
	}
	last := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "ERR_") {
			last = line
		}
	}
	return last
}

// daemonHandler serves relayed sessions from one host.
type daemonHandler struct {
	h *Host
	s config.Settings
	// idle is how long the daemon outlives its last session or listener.
	idle time.Duration
}

func (d daemonHandler) ServeSession(ctx context.Context, rw io.ReadWriter, hello daemon.Hello) error {
	sess := d.session(hello)
	replayed := make(map[string]bool, len(hello.Replay))
	for _, id := range hello.Replay {
		replayed[id] = true
	}
	return d.h.Server.ServeConn(ctx, rw, rw, stdio.Options{Session: sess, Replayed: replayed, Relayed: true})
}

// session builds a relayed session's own settings from its hello. What is
// wrong in them (the relay's own findings, and toolsets no plugin provides)
// becomes the session's warnings, never a refusal (docs/decisions.md D21).
func (d daemonHandler) session(hello daemon.Hello) *clientsession.Settings {
	warnings := append([]string(nil), hello.Warnings...)
	note := func(w string) {
		if w != "" {
			warnings = append(warnings, w)
		}
	}
	mode, w := config.SessionMode(hello.Mode)
	note(w)
	raw := hello.Toolsets
	if raw == "" {
		raw = config.DefaultToolsets
	}
	ts, w := config.SessionToolsets(raw)
	note(w)
	ts.Explicit = hello.ToolsetsSet
	ts, w = d.h.Catalog.KnownToolsets(mode, ts)
	note(w)
	project, w := config.SessionProject(hello.Project)
	note(w)
	projectSet := project != ""
	if !projectSet {
		root := hello.Root
		if root == "" {
			root = d.s.Root
		}
		project = clientsession.ProjectSlug(root)
	}
	return &clientsession.Settings{AgentID: hello.AgentID, Project: project, ProjectSet: projectSet, Toolsets: ts, Mode: mode,
		Key: hello.SessionKey, Warnings: warnings}
}

func (d daemonHandler) Reload() { _ = d.h.Reload(context.Background()) }

// ServeHTTP opens the HTTP listener a `cairn serve --http` asked for, with
// that command's session settings and key requirement, on the daemon's
// host: stdio sessions, HTTP sessions, the dashboard and the operator CLI
// share one process and one set of stores (docs/decisions.md D21).
func (d daemonHandler) ServeHTTP(ctx context.Context, hello daemon.Hello, ready func(daemon.HTTPListener)) error {
	sess := d.session(hello)
	var auth httpserve.Authenticator
	if !hello.NoAuth {
		// Keys are checked by the area that owns them (see newServe).
		var err error
		if auth, err = d.h.Server.PluginAuthenticator(); err != nil {
			return err
		}
	}
	// The listener's HTTP settings are the command's, even those it left
	// unset: never the environment the daemon happened to start with.
	env := map[string]string{}
	for k, v := range hello.HTTPEnv {
		env[k] = v
	}
	return d.h.Server.ServeHTTPWith(ctx, hello.Addr, httpserve.Options{Auth: auth, Session: sess, Env: env}, func(a net.Addr) {
		d.h.Server.AnnounceProject(sess)
		ready(daemon.HTTPListener{Addr: a.String(), URL: "http://" + a.String() + "/mcp", APIKeysRequired: auth != nil})
	})
}

// controlVerbs are the daemon's extra control requests, registered by the
// command files that need them (for example the dashboard's "ui").
var controlVerbs = map[string]func(d daemonHandler, data json.RawMessage) (json.RawMessage, error){}

// daemonStartHooks run once the daemon's host is up; each returns a function
// run at shutdown. Features living in the daemon (the dashboard) start here.
var daemonStartHooks []func(ctx context.Context, h *Host, p daemon.Paths) (stop func())

func (d daemonHandler) Control(verb string, data json.RawMessage) (json.RawMessage, error) {
	f, ok := controlVerbs[verb]
	if !ok {
		return nil, fmt.Errorf("unknown control request %q", verb)
	}
	return f(d, data)
}

// Check refuses a session whose settings cannot be served, with the same
// text a server of its own would print, and tells it what is wrong in the
// workspace (malformed skills, plugins that failed).
func (d daemonHandler) Check(hello daemon.Hello) ([]string, error) {
	sess := d.session(hello)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return append(sess.Warnings, d.h.System.Health(ctx).Problems...), nil
}

// DaemonStatus is what `cairn status` shows.
type DaemonStatus struct {
	// Running is true: `cairn status --json` with no daemon prints
	// {"running": false, "data_dir": …} and exits 3.
	Running  bool   `json:"running"`
	PID      int    `json:"pid"`
	Version  string `json:"version"`
	DataDir  string `json:"data_dir"`
	Socket   string `json:"socket"`
	Mode     string `json:"mode"`
	Toolsets string `json:"toolsets"`
	// Idle is how long the daemon stays up after its last session or
	// HTTP listener (CAIRN_DAEMON_IDLE).
	Idle     string               `json:"idle"`
	Sessions []daemon.SessionInfo `json:"sessions"`
	// HTTP are the listeners `cairn serve --http` commands hold open in
	// the daemon.
	HTTP   []daemon.HTTPListener    `json:"http_listeners"`
	Health systemtools.HealthOutput `json:"health"`
}

func (d daemonHandler) Status(sessions []daemon.SessionInfo, listeners []daemon.HTTPListener) any {
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].ID < sessions[j].ID })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := daemon.PathsFor(d.s.DataDir)
	return DaemonStatus{Running: true,
		PID: os.Getpid(), Version: wiring.Version, DataDir: p.DataDir, Socket: p.Socket,
		Mode: d.s.Mode, Toolsets: d.s.Toolsets.String(), Idle: d.idle.String(), Sessions: sessions, HTTP: listeners, Health: d.h.System.Health(ctx),
	}
}

func daemonIdle() (time.Duration, error) {
	v := os.Getenv("CAIRN_DAEMON_IDLE")
	if v == "" {
		return DefaultDaemonIdle, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errs.Newf(400, errs.ConfigInvalid, "CAIRN_DAEMON_IDLE %q is not a positive duration such as 30s or 5m", v)
	}
	return d, nil
}

func newDaemon() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:    daemonArg,
		Short:  "Run the shared daemon (started by `cairn serve`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			idle, err := daemonIdle()
			if err != nil {
				return err
			}
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			p := daemon.PathsFor(s.DataDir)
			lock, err := daemon.Lock(p)
			if errors.Is(err, daemon.ErrAlreadyRunning) {
				fmt.Fprintln(os.Stderr, "cairn daemon: another daemon serves", s.DataDir)
				return nil
			}
			if err != nil {
				return errs.Newf(500, errs.InitFailed, "daemon lock %s: %v", p.Lock, err)
			}
			defer lock.Close()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			defer startTracing("cairn-daemon")()
			h, shutdown, err := startHost(ctx, configFile, nil)
			if err != nil {
				return err
			}
			defer shutdown()
			defer reloadOnHUP(h)()
			defer h.Fleet.WatchConfig(ctx)()
			for _, start := range daemonStartHooks {
				defer start(ctx, h, p)()
			}
			logger := newLogger(s).Named("daemon")
			logger.Info("daemon ready", "socket", p.Socket, "pid", os.Getpid(), "idle", idle)
			return daemon.Run(ctx, p, daemonHandler{h: h, s: h.Settings, idle: idle}, daemon.Options{
				Idle: idle, Version: wiring.Version,
				Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
				Busy: func() bool { return h.Server.MCPTasksWorking(ctx) > 0 },
			})
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	return cmd
}

// configuredPaths returns the daemon files of the configured data dir.
func configuredPaths(configFile string) (daemon.Paths, error) {
	s, cleanup, err := settings(configFile)
	if err != nil {
		return daemon.Paths{}, err
	}
	cleanup()
	return daemon.PathsFor(s.DataDir), nil
}

func newStatus() *cobra.Command {
	var configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the shared daemon of this data dir: sessions, HTTP listeners, plugins and stores",
		Long: `Show the shared daemon of this data dir: its sessions, HTTP listeners, the
plugins it runs (their live state) and its store. With no daemon running it
says so on stdout and exits 3. When git tracks a file of the data dir (which
holds the private audit signing key), a warning line on stderr names them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			warnTracked(cmd.ErrOrStderr(), s)
			p := daemon.PathsFor(s.DataDir)
			w, err := daemon.Control(p, "status", 10*time.Second)
			if err != nil {
				if errors.Is(err, daemon.ErrNotRunning) {
					// An answer, not a failure: printed on stdout, with
					// its own status (docs/cli.md).
					if asJSON {
						b, _ := json.Marshal(map[string]any{"running": false, "data_dir": p.DataDir})
						fmt.Fprintln(cmd.OutOrStdout(), string(b))
					} else {
						fmt.Fprintf(cmd.OutOrStdout(), "no cairn daemon is running for %s; `cairn serve` starts one\n", p.DataDir)
					}
					return exitNotRunning
				}
				return err
			}
			if asJSON {
				_, err := cmd.OutOrStdout().Write(append(w.Status, '\n'))
				return err
			}
			var st DaemonStatus
			if err := json.Unmarshal(w.Status, &st); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "cairn daemon %s, pid %d, mode %s, toolsets %s\n", st.Version, st.PID, st.Mode, st.Toolsets)
			fmt.Fprintf(out, "data dir %s\nsocket   %s\n", st.DataDir, st.Socket)
			if st.Idle != "" {
				fmt.Fprintf(out, "idle     exits %s after its last session or HTTP listener (cairn stop: now)\n", st.Idle)
			}
			fmt.Fprintf(out, "store    %s (open %v, schema %d)\n\n", st.Health.DB.Path, st.Health.DB.Open, st.Health.DB.UserVersion)
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SESSION\tAGENT\tCLIENT PID\tSINCE")
			for _, se := range st.Sessions {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", se.ID, se.AgentID, se.ClientPID, se.Since)
			}
			fmt.Fprintln(tw)
			if len(st.HTTP) > 0 {
				fmt.Fprintln(tw, "HTTP LISTENER\tAPI KEYS\tSERVE PID\tSINCE")
				for _, l := range st.HTTP {
					keys := "required"
					if !l.APIKeysRequired {
						keys = "none (loopback)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", l.URL, keys, l.ClientPID, l.Since)
				}
				fmt.Fprintln(tw)
			}
			fmt.Fprintln(tw, "PLUGIN\tVERSION\tSTATE\tHEALTH\tTOOLS\tRESTARTS")
			var fixes []string
			for _, pl := range st.Health.Plugins {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", pl.Name, pl.Version, pl.State, pl.Status, pl.Tools, pl.Restarts)
				if pl.State != "running" && pl.Message != "" {
					fixes = append(fixes, fmt.Sprintf("%s: %s", pl.Name, pl.Message))
				}
			}
			// Plugins that do not run are listed too, with what fixes them
			// (docs/decisions.md D36).
			for _, u := range st.Health.Untrusted {
				fmt.Fprintf(tw, "%s\t-\tuntrusted\tnot started\t0\t0\n", u.Name)
				fixes = append(fixes, fmt.Sprintf("%s: %s; to run it: %s", u.Name, u.Reason, u.Command))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, f := range fixes {
				fmt.Fprintln(out, f)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newStop() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the shared daemon of this data dir cleanly",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := configuredPaths(configFile)
			if err != nil {
				return err
			}
			w, err := daemon.Control(p, "stop", 10*time.Second)
			if err != nil {
				if errors.Is(err, daemon.ErrNotRunning) {
					fmt.Fprintf(cmd.OutOrStdout(), "no cairn daemon is running for %s\n", p.DataDir)
					return nil
				}
				return err
			}
			// The daemon holds its lock until its plugins and stores are
			// closed; taking the lock means it is gone.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if lock, err := daemon.Lock(p); err == nil {
					lock.Close()
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("the cairn daemon (pid %d) did not stop within 30s", w.DaemonPID)
				}
				time.Sleep(20 * time.Millisecond)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped the cairn daemon (pid %d)\n", w.DaemonPID)
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	return cmd
}
