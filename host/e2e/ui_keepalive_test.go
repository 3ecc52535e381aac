package e2e

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An open page and a running `cairn ui` each keep the shared daemon up past
// its idle time; when they go, the daemon stops as usual.
func TestUIKeepsTheDaemonAlive(t *testing.T) {
	w := newWorkspace(t)
	const idle = 2 * time.Second
	env := []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=" + idle.String(), "CAIRN_USER=alice"}
	t.Cleanup(func() { runCairn(t, w, "", env, "stop") })

	// A page's live stream holds the daemon.
	login := uiURL(t, w, env)
	pid := daemonPID(t, w)
	c := loggedInClient(t, login)
	base := login[:strings.Index(login, "/login")]
	res, err := c.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	if first, _ := bufio.NewReader(res.Body).ReadString('\n'); !strings.HasPrefix(first, "retry:") {
		t.Fatalf("event stream began with %q", first)
	}
	// An absence: the daemon's real idle time passes twice.
	time.Sleep(2*idle + time.Second)
	if !processAlive(pid) {
		t.Fatalf("the daemon (pid %d) stopped under an open page", pid)
	}
	res.Body.Close()
	eventually(t, 5*idle, "the daemon to stop once the page closed", func() bool { return !processAlive(pid) })

	// `cairn ui` itself holds it until interrupted.
	cmd := exec.Command(cairnBin, "ui", "--no-open")
	cmd.Env = append(append([]string{}, w.env...), env...)
	cmd.Dir = w.root
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "http://127.0.0.1:") || !strings.Contains(line, "/login?token=") {
		t.Fatalf("cairn ui's first line %q is not a login URL", line)
	}
	if got := strings.TrimSpace(line); got[:strings.Index(got, "/login")] != base {
		t.Errorf("the dashboard moved from %s to %s across daemon restarts", base, got)
	}
	pid = daemonPID(t, w)
	// An absence: the daemon's real idle time passes twice.
	time.Sleep(2*idle + time.Second)
	if !processAlive(pid) {
		t.Fatalf("the daemon (pid %d) stopped while cairn ui ran", pid)
	}
	loggedInClient(t, strings.TrimSpace(line)) // the printed URL logs in
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("cairn ui after Ctrl-C: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cairn ui did not stop on SIGINT")
	}
	eventually(t, 5*idle, "the daemon to stop once cairn ui ended", func() bool { return !processAlive(pid) })
}
