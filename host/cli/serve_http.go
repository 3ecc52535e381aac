package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/stdoutguard"
)

// One server per data dir (docs/decisions.md D21): the bbolt stores admit
// one process, so every transport of a data dir whose daemon is allowed is
// served by that daemon — stdio through the relay, HTTP through a listener
// the daemon opens for `cairn serve --http` — and a server of its own is
// refused, with what to do instead, while the daemon lives.

// httpCloseGrace bounds the wait for the daemon to confirm that it closed
// a listener (it lets requests in flight end, up to 5 s).
const httpCloseGrace = 15 * time.Second

// serveThroughDaemon serves this `cairn serve` from the data dir's shared
// daemon when daemons are allowed; served is false when the command must
// serve in its own process.
func serveThroughDaemon(ctx context.Context, s config.Settings, configFile, httpAddr string, noDaemon, noAuth bool) (served bool, err error) {
	if !useDaemon(noDaemon, s) {
		return false, refuseBesideDaemon(s, httpAddr, noDaemon)
	}
	if httpAddr != "" {
		return true, serveHTTPThroughDaemon(ctx, s, configFile, httpAddr, noAuth)
	}
	return true, relay(ctx, s, configFile, os.Stdin, stdoutguard.Stdout())
}

// refuseBesideDaemon refuses a server of its own on a data dir whose
// daemon lives: it could not open the stores the daemon holds, and would
// say so only after starting every plugin.
func refuseBesideDaemon(s config.Settings, httpAddr string, noDaemon bool) error {
	if s.TempDataDir || s.Mode == config.ModeMinimal {
		return nil // a store of its own, or none
	}
	pid, ok := daemon.Running(daemon.PathsFor(s.DataDir))
	if !ok {
		return nil
	}
	join, off := "`cairn serve`", "--no-daemon"
	if httpAddr != "" {
		join = "`cairn serve --http " + httpAddr + "`"
	}
	if !noDaemon {
		off = "CAIRN_DAEMON=" + os.Getenv("CAIRN_DAEMON")
	}
	return errs.Newf(500, errs.InitFailed, "a cairn daemon (pid %d) serves the data dir %s; use %s without %s to join it, or `cairn stop` first to run without it",
		pid, s.DataDir, join, off)
}

// serveHTTPThroughDaemon asks the daemon of the data dir (started when
// none runs) to serve HTTP on addr, logs where, and holds the listener
// until SIGINT or SIGTERM. A daemon that dies is replaced and the listener
// reopened on the same address; a daemon stopped on purpose ends the
// command.
func serveHTTPThroughDaemon(ctx context.Context, s config.Settings, configFile, addr string, noAuth bool) error {
	p := daemon.PathsFor(s.DataDir)
	defer forwardHUP(p)()
	hello := sessionHello(s)
	hello.Addr, hello.NoAuth, hello.HTTPEnv = addr, noAuth, httpEnv()
	logger := newLogger(s)
	for _, w := range s.Warnings {
		logger.Warn(w)
	}
	start := func() (func() (bool, error), error) { return startDaemon(p, configFile) }
	hold, err := daemon.OpenHTTP(ctx, p, hello, start, connectTimeout)
	for {
		if err != nil {
			if errors.Is(err, daemon.ErrRefused) {
				if strings.Contains(err.Error(), fmt.Sprintf("unknown control request %q", daemon.ControlHTTP)) {
					// A daemon of an older cairn, from before it served HTTP.
					return errs.Newf(500, errs.InitFailed, "the running cairn daemon of %s predates serving HTTP; `cairn stop` it and run this command again", s.DataDir)
				}
				return refusal(err)
			}
			if ctx.Err() != nil {
				return nil
			}
			return errs.Newf(500, errs.InitFailed, "%v (set CAIRN_DAEMON=off to serve HTTP without the shared daemon)", err)
		}
		l := hold.Listener
		logger.Info("serving MCP over streamable HTTP", "daemon_pid", hold.DaemonPID, "api_keys_required", l.APIKeysRequired,
			"daemon_log", p.Log, "url", l.URL)
		werr := hold.Wait(ctx, httpCloseGrace)
		if werr == nil {
			return nil
		}
		if !errors.Is(werr, daemon.ErrDaemonLost) {
			return werr
		}
		// The same port, so the clients' URL still holds; their sessions
		// start again (an HTTP session lives in its server's memory).
		fmt.Fprintf(os.Stderr, "cairn: %v; reopening it on a fresh daemon\n", werr)
		hello.Addr = l.Addr
		hold, err = reopenHTTP(ctx, p, hello, start)
	}
}

// httpEnv is this command's CAIRN_HTTP_* and CAIRN_OAUTH_* environment,
// the settings of its listener.
func httpEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && (strings.HasPrefix(k, httpserve.EnvPrefix) || strings.HasPrefix(k, httpserve.OAuthEnvPrefix)) {
			env[k] = v
		}
	}
	return env
}

// reopenHTTP reopens a listener whose daemon died, trying a few times: the
// relays of the same data dir race to start the fresh daemon.
func reopenHTTP(ctx context.Context, p daemon.Paths, hello daemon.Hello, start daemon.Starter) (*daemon.HTTPHold, error) {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
			}
		}
		var hold *daemon.HTTPHold
		if hold, err = daemon.OpenHTTP(ctx, p, hello, start, connectTimeout); err == nil || errors.Is(err, daemon.ErrRefused) {
			return hold, err
		}
		fmt.Fprintf(os.Stderr, "cairn: cannot reach the daemon (attempt %d of 5): %v\n", attempt+1, strings.TrimSpace(err.Error()))
	}
	return nil, err
}
