package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// One server per data dir: `cairn serve --http` on a data dir whose daemon
// lives serves through that daemon, so stdio sessions, HTTP sessions and
// the CLI share one process and one store; a server of its own beside the
// daemon is refused in one line.

// httpServe is one `cairn serve --http` process.
type httpServe struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	stdout *syncBuffer
	url    string
	addr   string
	exited chan struct{}
}

// startHTTPServe starts `cairn serve --http 127.0.0.1:0` with env added and
// waits for the line that says where it listens.
func startHTTPServe(t *testing.T, w *workspace, env ...string) *httpServe {
	t.Helper()
	cmd := newCmd(w, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	hs := &httpServe{cmd: cmd, stderr: &syncBuffer{}, stdout: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = hs.stderr, hs.stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(hs.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		hs.wait(t)
		if t.Failed() {
			t.Logf("cairn serve --http stderr:\n%s", hs.stderr.String())
		}
	})
	eventually(t, 60*time.Second, "the HTTP listener", func() bool {
		select {
		case <-hs.exited:
			t.Fatalf("cairn serve --http exited: %s", hs.stderr.String())
		default:
		}
		for _, line := range strings.Split(hs.stderr.String(), "\n") {
			if i := strings.Index(line, "url=http://"); i >= 0 {
				hs.url = strings.Trim(strings.TrimSpace(line[i+4:]), `"`)
				hs.addr = strings.TrimSuffix(strings.TrimPrefix(hs.url, "http://"), "/mcp")
				return true
			}
		}
		return false
	})
	return hs
}

// wait waits for the command to exit.
func (hs *httpServe) wait(t *testing.T) {
	t.Helper()
	select {
	case <-hs.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("cairn serve --http did not exit:\n%s", hs.stderr.String())
	}
}

// refused reports whether nothing listens on addr any more.
func refused(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return true
	}
	conn.Close()
	return false
}

// daemonStatus is the part of `cairn status --json` these tests read.
type daemonStatus struct {
	PID      int              `json:"pid"`
	Sessions []map[string]any `json:"sessions"`
	HTTP     []struct {
		URL             string `json:"url"`
		ClientPID       int    `json:"client_pid"`
		APIKeysRequired bool   `json:"api_keys_required"`
	} `json:"http_listeners"`
}

func statusOf(t *testing.T, w *workspace) daemonStatus {
	t.Helper()
	code, out, stderr := runCairn(t, w, "", daemonEnv, "status", "--json")
	if code != 0 {
		t.Fatalf("cairn status: %d %s", code, stderr)
	}
	var st daemonStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	return st
}

// oneLine checks that a refusal printed exactly one line, naming the
// daemon and what to do.
func oneLine(t *testing.T, what string, code int, stderr string, pid int) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("cairn daemon (pid %d)", pid)) ||
		!strings.Contains(lines[0], "cairn stop") {
		t.Fatalf("%s beside a live daemon: exit %d, stderr:\n%s", what, code, stderr)
	}
}

func TestDaemonServesHTTPBesideStdio(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	pid := daemonPID(t, w)
	stdioTask, err := callOK(s, "task_create", map[string]any{"title": "from stdio", "project": "web"})
	if err != nil {
		t.Fatal(err)
	}
	// The key is created through the same daemon (the CLI joins it).
	_, key := createKey(t, w, "--name", "agent", "--user", "alice")

	hs := startHTTPServe(t, w, daemonEnv...)
	if text := hs.stderr.String(); !strings.Contains(text, "daemon_pid="+strconv.Itoa(pid)) || !strings.Contains(text, "api_keys_required=true") {
		t.Fatalf("serve --http did not join daemon %d with keys required:\n%s", pid, text)
	}
	agent := newHTTPAgent(t, hs.url, key)
	got := agent.call("task_get", map[string]any{"task_id": stdioTask["task_id"]})
	if !got.ok || got.result["title"] != "from stdio" {
		t.Fatalf("the stdio session's task over HTTP: %v %v", got, got.result)
	}
	created := agent.call("task_create", map[string]any{"title": "from http", "project": "web"})
	if !created.ok || created.result["created_by"] != "alice" {
		t.Fatalf("task_create over HTTP: %v %v", created, created.result)
	}
	// The stdio session still works, and sees the HTTP session's write.
	if out, err := callOK(s, "task_get", map[string]any{"task_id": created.result["task_id"]}); err != nil || out["title"] != "from http" {
		t.Fatalf("the HTTP task over stdio: %v %v", out, err)
	}
	st := statusOf(t, w)
	if st.PID != pid || len(st.HTTP) != 1 || st.HTTP[0].URL != hs.url || st.HTTP[0].ClientPID != hs.cmd.Process.Pid || !st.HTTP[0].APIKeysRequired {
		t.Fatalf("status with one HTTP listener: %+v (serve pid %d, url %s)", st, hs.cmd.Process.Pid, hs.url)
	}

	// A second serve --http on the same address is refused, clearly.
	code, _, stderr := runCairn(t, w, "", daemonEnv, "serve", "--http", hs.addr)
	if code == 0 || !strings.Contains(stderr, "already serves HTTP there") {
		t.Fatalf("a second serve --http on %s: %d %s", hs.addr, code, stderr)
	}
	// A server of its own is refused in one line, with what to do.
	code, _, stderr = runCairn(t, w, "", daemonEnv, "serve", "--no-daemon")
	oneLine(t, "serve --no-daemon", code, stderr, pid)
	code, _, stderr = runCairn(t, w, "", []string{"CAIRN_DAEMON=off"}, "serve", "--http", "127.0.0.1:0")
	oneLine(t, "serve --http with CAIRN_DAEMON=off", code, stderr, pid)

	// Stopping serve --http closes its listener; the daemon and the stdio
	// session live on.
	if err := hs.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	hs.wait(t)
	if code := hs.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("serve --http exited %d on SIGTERM:\n%s", code, hs.stderr.String())
	}
	if out := hs.stdout.String(); out != "" {
		t.Fatalf("serve --http wrote to stdout: %q", out)
	}
	eventually(t, 30*time.Second, "the port to refuse after serve --http stopped", func() bool { return refused(hs.addr) })
	if !processAlive(pid) || daemonPID(t, w) != pid {
		t.Fatalf("the daemon %d did not outlive serve --http", pid)
	}
	if _, err := callOK(s, "task_get", map[string]any{"task_id": stdioTask["task_id"]}); err != nil {
		t.Fatalf("the stdio session after serve --http stopped: %v", err)
	}

	// Killed outright, serve --http takes its listener with it. Its HTTP
	// settings are its own, not those of the environment the daemon
	// started in.
	killed := startHTTPServe(t, w, append(daemonEnv, "CAIRN_HTTP_ALLOWED_ORIGINS=https://agents.example.com")...)
	if !newHTTPAgent(t, killed.url, key).call("task_get", map[string]any{"task_id": stdioTask["task_id"]}).ok {
		t.Fatal("the second listener does not serve")
	}
	if resp, _ := rawMCP(t, killed.url, rawReq{method: "POST", key: key, origin: "https://agents.example.com", body: initBody}); resp.StatusCode != 200 {
		t.Fatalf("the origin this serve --http allows: %d", resp.StatusCode)
	}
	if resp, body := rawMCP(t, killed.url, rawReq{method: "POST", key: key, origin: "https://evil.example", body: initBody}); resp.StatusCode != 403 {
		t.Fatalf("a foreign origin: %d %v", resp.StatusCode, body)
	}
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.wait(t)
	eventually(t, 30*time.Second, "the port to refuse after serve --http was killed", func() bool { return refused(killed.addr) })
	eventually(t, 30*time.Second, "the status to drop the listener", func() bool { return len(statusOf(t, w).HTTP) == 0 })
	if !processAlive(pid) {
		t.Fatalf("the daemon %d died with a killed serve --http", pid)
	}
	if _, err := callOK(s, "task_get", map[string]any{"task_id": created.result["task_id"]}); err != nil {
		t.Fatalf("the stdio session after serve --http was killed: %v", err)
	}
}

// With no daemon, serve --http starts one and serves through it; the
// daemon outlives the command by its idle period only.
func TestServeHTTPStartsTheDaemon(t *testing.T) {
	w := newWorkspace(t)
	_, key := createKey(t, w, "--name", "agent", "--user", "alice")
	hs := startHTTPServe(t, w, daemonEnv...)
	pid := daemonPID(t, w)
	if pid == 0 || pid == hs.cmd.Process.Pid || !processAlive(pid) {
		t.Fatalf("no daemon of its own: daemon pid %d, serve pid %d", pid, hs.cmd.Process.Pid)
	}
	if got := newHTTPAgent(t, hs.url, key).call("task_create", map[string]any{"title": "first", "project": "web"}); !got.ok {
		t.Fatalf("task_create over HTTP: %v %v", got, got.result)
	}
	_ = hs.cmd.Process.Signal(syscall.SIGTERM)
	hs.wait(t)
	eventually(t, 60*time.Second, "the daemon to go idle after its only listener", func() bool { return !processAlive(pid) })
}

// A daemon killed under serve --http is replaced and the listener reopened
// on the same address; a daemon stopped on purpose ends serve --http with
// that reason.
func TestServeHTTPSurvivesItsDaemon(t *testing.T) {
	w := newWorkspace(t)
	_, key := createKey(t, w, "--name", "agent", "--user", "alice")
	hs := startHTTPServe(t, w, daemonEnv...)
	first := newHTTPAgent(t, hs.url, key).call("task_create", map[string]any{"title": "before the kill", "project": "web"})
	if !first.ok {
		t.Fatalf("task_create: %v %v", first, first.result)
	}
	pid := daemonPID(t, w)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "a fresh daemon with the listener reopened", func() bool {
		np := daemonPID(t, w)
		if np == pid || !processAlive(np) {
			return false
		}
		ls := statusOf(t, w).HTTP
		return len(ls) == 1 && ls[0].URL == hs.url
	})
	stderrSays(t, hs.stderr, "serve --http's stderr (saying it reopened its listener)", "reopening it on a fresh daemon")
	got := newHTTPAgent(t, hs.url, key).call("task_get", map[string]any{"task_id": first.result["task_id"]})
	if !got.ok || got.result["title"] != "before the kill" {
		t.Fatalf("the reopened listener: %v %v", got, got.result)
	}

	if code, out, stderr := runCairn(t, w, "", daemonEnv, "stop"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("cairn stop: %d %s %s", code, out, stderr)
	}
	hs.wait(t)
	if code := hs.cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(hs.stderr.String(), "was stopped") {
		t.Fatalf("serve --http after cairn stop: exit %d\n%s", code, hs.stderr.String())
	}
	if !refused(hs.addr) {
		t.Fatal("the listener outlived cairn stop")
	}
}
