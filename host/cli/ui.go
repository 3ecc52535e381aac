package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/host/ui"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() {
	register(newUI)
	controlVerbs["ui"] = uiControl
	daemonStartHooks = append(daemonStartHooks, startDashboard)
}

// dashboard is the daemon's running dashboard, set by its start hook.
var dashboard struct {
	mu sync.Mutex
	s  *ui.Server
}

// uiRequest is the "ui" control request: who logs in, and how.
type uiRequest struct {
	Person       string `json:"person"`
	AllowActions bool   `json:"allow_actions"`
	Project      string `json:"project,omitempty"`
}

// uiReply answers it with a login URL holding a fresh one-time token.
type uiReply struct {
	URL string `json:"url"`
}

func uiControl(_ daemonHandler, data json.RawMessage) (json.RawMessage, error) {
	var req uiRequest
	if err := json.Unmarshal(data, &req); err != nil || req.Person == "" {
		return nil, fmt.Errorf("ui request needs a person")
	}
	dashboard.mu.Lock()
	s := dashboard.s
	dashboard.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("the dashboard is not running in this daemon; see its log")
	}
	return json.Marshal(uiReply{URL: s.LoginURL(ui.Grant{Person: req.Person, AllowActions: req.AllowActions, Project: req.Project})})
}

// startDashboard serves the dashboard from the daemon. An open page holds a
// relayed session on the daemon's own socket, so the daemon does not stop
// for idleness under a reader.
func startDashboard(_ context.Context, h *Host, p daemon.Paths) func() {
	logger := newLogger(h.Settings).Named("ui")
	s, err := ui.Start(dashboardBackend{h}, ui.Config{
		DataDir: h.Settings.DataDir,
		KeyFile: h.Settings.AuditKeyFile,
		KeyName: AuditKeyName,
		TSAURL:  h.Settings.AuditTSAURL,
		Plugins: func() ([]supervisor.Status, []trust.Untrusted) {
			var sts []supervisor.Status
			for _, pl := range h.Fleet.Processes() {
				sts = append(sts, pl.Status())
			}
			return sts, h.Fleet.Untrusted()
		},
		Status: func() (json.RawMessage, error) {
			w, err := daemon.Control(p, "status", 10*time.Second)
			return w.Status, err
		},
		KeepAlive: func() func() {
			conn, _, _, err := daemon.Dial(p, daemon.Hello{Relay: 1, AgentID: "cairn-ui (page open)", ClientPID: os.Getpid()}, 5*time.Second)
			if err != nil {
				return func() {}
			}
			return func() { conn.Close() }
		},
		Logf: func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) },
	})
	if err != nil {
		logger.Error("dashboard not started", "error", err)
		return func() {}
	}
	dashboard.mu.Lock()
	dashboard.s = s
	dashboard.mu.Unlock()
	return func() {
		dashboard.mu.Lock()
		dashboard.s = nil
		dashboard.mu.Unlock()
		s.Stop()
	}
}

// uiPerson is who acts from the dashboard: CAIRN_USER, else the OS user.
func uiPerson() string {
	if v := os.Getenv("CAIRN_USER"); v != "" {
		return v
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "operator"
}

// openBrowser opens url when a browser is reachable; it reports whether it
// tried.
func openBrowser(url string) bool {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return false
		}
		if _, err := exec.LookPath("xdg-open"); err != nil {
			return false
		}
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = nil, nil
	return cmd.Start() == nil
}

func newUI() *cobra.Command {
	var configFile string
	var printURL, noOpen, allowActions bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Open the live web dashboard of this data dir (prints its login URL first)",
		Long: `Serve the dashboard from the shared daemon of the data dir (started when
none runs), print a login URL with a fresh one-time token as the first line
of stdout, open a browser when one is available, and keep the daemon alive
until interrupted. --print-url prints the URL and exits at once, leaving the
dashboard served by the daemon. The dashboard is read-only unless
--allow-actions (or CAIRN_UI_ALLOW_ACTIONS=1); actions are made as
CAIRN_USER or the OS user.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			cleanup()
			switch os.Getenv("CAIRN_UI_ALLOW_ACTIONS") {
			case "1", "true", "on", "yes":
				allowActions = true
			}
			p := daemon.PathsFor(s.DataDir)
			// The session's active project (D24: CAIRN_PROJECT, else the
			// workspace directory's slug); the dashboard lands on it when it
			// holds tasks, else where a task changed last (docs/decisions.md D25).
			data, _ := json.Marshal(uiRequest{Person: uiPerson(), AllowActions: allowActions, Project: clientsession.Default(s).Project})
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			url, err := uiLoginURL(ctx, p, configFile, data)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), url)
			if printURL {
				return nil
			}
			if !noOpen && !openBrowser(url) {
				fmt.Fprintln(cmd.ErrOrStderr(), "cairn: no browser found; open the URL above")
			}
			fmt.Fprintln(cmd.ErrOrStderr(), "cairn: dashboard served by the shared daemon; Ctrl-C to stop keeping it alive")
			return holdDaemon(ctx, p, configFile)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	cmd.Flags().BoolVar(&printURL, "print-url", false, "print the login URL and exit")
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "do not open a browser")
	cmd.Flags().BoolVar(&allowActions, "allow-actions", false, "let the page move, block, assign and comment on tasks")
	return cmd
}

// uiLoginURL makes sure the daemon runs (starting it as a relay would) and
// asks it for a login URL.
func uiLoginURL(ctx context.Context, p daemon.Paths, configFile string, data json.RawMessage) (string, error) {
	conn, _, w, err := daemon.Connect(ctx, p, daemon.Hello{Control: "ui", Data: data}, func() (func() (bool, error), error) {
		return startDaemon(p, configFile)
	}, connectTimeout)
	if err != nil {
		return "", errs.Newf(500, errs.InitFailed, "cannot reach the cairn daemon for %s: %v", p.DataDir, err)
	}
	conn.Close()
	var r uiReply
	if err := json.Unmarshal(w.Status, &r); err != nil || r.URL == "" {
		return "", errs.Newf(500, errs.InitFailed, "the cairn daemon (pid %d) gave no dashboard URL; its log is %s", w.DaemonPID, p.Log)
	}
	return r.URL, nil
}

// holdDaemon keeps a relayed session open so the daemon stays up while
// `cairn ui` runs; when the daemon goes away it starts a fresh one (the
// page's stream reconnects to the same port).
func holdDaemon(ctx context.Context, p daemon.Paths, configFile string) error {
	hello := daemon.Hello{Relay: 1, AgentID: "cairn-ui", ClientPID: os.Getpid()}
	for ctx.Err() == nil {
		conn, r, _, err := daemon.Connect(ctx, p, hello, func() (func() (bool, error), error) {
			return startDaemon(p, configFile)
		}, connectTimeout)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(os.Stderr, "cairn: %v; retrying\n", err)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		done := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, r); close(done) }()
		select {
		case <-ctx.Done():
		case <-done:
		}
		conn.Close()
		if errors.Is(ctx.Err(), context.Canceled) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
