package cli

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// fakeDaemon answers on the daemon socket of dir as a live daemon with pid.
func fakeDaemon(t *testing.T, dir string, pid int) {
	t.Helper()
	p := daemon.PathsFor(dir)
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	b, _ := json.Marshal(daemon.Info{PID: pid, Socket: p.Socket})
	if err := os.WriteFile(p.Info, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRefuseBesideDaemon(t *testing.T) {
	dir := t.TempDir()
	s := config.Settings{DataDir: dir, Mode: config.ModeFull}
	if err := refuseBesideDaemon(s, "", true); err != nil {
		t.Fatalf("no daemon: %v", err)
	}
	fakeDaemon(t, dir, 4242)
	err := refuseBesideDaemon(s, "", true)
	e, ok := errs.As(err)
	if !ok || e.Code != errs.InitFailed || strings.Contains(e.Message, "\n") ||
		!strings.Contains(e.Message, "cairn daemon (pid 4242)") || !strings.Contains(e.Message, "use `cairn serve` without --no-daemon") || !strings.Contains(e.Message, "`cairn stop` first") {
		t.Fatalf("--no-daemon beside a daemon: %v", err)
	}
	t.Setenv("CAIRN_DAEMON", "off")
	err = refuseBesideDaemon(s, "127.0.0.1:8765", false)
	if err == nil || !strings.Contains(err.Error(), "use `cairn serve --http 127.0.0.1:8765` without CAIRN_DAEMON=off") {
		t.Fatalf("CAIRN_DAEMON=off serve --http beside a daemon: %v", err)
	}
	// A store of its own, or none, does not meet the daemon's.
	for _, own := range []config.Settings{{DataDir: dir, TempDataDir: true, Mode: config.ModeTest}, {DataDir: dir, Mode: config.ModeMinimal}} {
		if err := refuseBesideDaemon(own, "", true); err != nil {
			t.Errorf("mode %s: %v", own.Mode, err)
		}
	}
}

func TestHTTPEnvIsTheListenersOwn(t *testing.T) {
	t.Setenv("CAIRN_HTTP_SESSION_IDLE", "1m")
	t.Setenv("CAIRN_HTTP_ALLOWED_ORIGINS", "")
	t.Setenv("CAIRN_PROJECT", "web")
	env := httpEnv()
	if env["CAIRN_HTTP_SESSION_IDLE"] != "1m" || len(env) < 2 {
		t.Fatalf("http env %v", env)
	}
	if _, ok := env["CAIRN_HTTP_ALLOWED_ORIGINS"]; !ok {
		t.Errorf("a set but empty CAIRN_HTTP_ALLOWED_ORIGINS is missing: %v", env)
	}
	if _, ok := env["CAIRN_PROJECT"]; ok {
		t.Errorf("a session setting travels as an HTTP setting: %v", env)
	}
}
