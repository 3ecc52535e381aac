package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wrapper writes a shell script that records each start (its pid) in
// marks, waits while the file slow exists (a slow handshake), exits 3 with
// a message while the file broken exists, and otherwise runs the testkit.
func wrapper(t *testing.T) (script, marks, slow, broken string, env []string) {
	t.Helper()
	dir := t.TempDir()
	marks, slow, broken = filepath.Join(dir, "marks"), filepath.Join(dir, "slow"), filepath.Join(dir, "broken")
	script = filepath.Join(dir, "cairn-plugin-wrapped")
	body := `#!/bin/sh
echo $$ >> "$MARKS"
while [ -e "$SLOW" ]; do sleep 0.05; done
if [ -e "$BROKEN" ]; then echo "wrapped: cannot open my store" >&2; exit 3; fi
exec "$BIN"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	env = []string{"MARKS=" + marks, "SLOW=" + slow, "BROKEN=" + broken, "BIN=" + testkitBin}
	return script, marks, slow, broken, env
}

func starts(t *testing.T, marks string) []string {
	t.Helper()
	b, err := os.ReadFile(marks)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// TestStopDuringRestartDoesNotPanic reproduces a double close once seen:
// Stop while a crashed plugin's restart is in its handshake used to close
// the ready channel, and the restart closed it again (panic: close of
// closed channel in supervisor.launch). Now Stop ends the restart: the
// half-started process is killed, the plugin stays stopped, and Stop
// returns only when no restart can still revive it.
func TestStopDuringRestartDoesNotPanic(t *testing.T) {
	script, marks, slow, _, env := wrapper(t)
	p := startTestkit(t, Spec{Path: script, Env: env}, testEnv(t, Backoff{Initial: time.Millisecond, Max: time.Millisecond}), Hooks{})
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	kill(t, p)
	waitFor(t, "the restart to be in flight", func() bool { return len(starts(t, marks)) == 2 })
	p.Stop(context.Background())
	// Let a handshake that Stop failed to end complete: before the fix,
	// that is where the restart closed the channel Stop had closed.
	if err := os.Remove(slow); err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(starts(t, marks)[1], &pid)
	waitFor(t, "the half-started process to be gone", func() bool { return !alive(pid) })
	if st := p.Status(); st.State != StateStopped {
		t.Fatalf("state after Stop = %s, want stopped", st.State)
	}
	if got := len(starts(t, marks)); got != 2 {
		t.Fatalf("the plugin was started %d times; after Stop it must not be started again", got)
	}
	_, err := call(p, "testkit_echo", map[string]any{"message": "hi"})
	typed(t, err, 503, "ERR_PLUGIN_UNAVAILABLE")
}

// TestStopWhileWaitingForBackoff: Stop during the backoff wait returns at
// once and nothing starts afterwards.
func TestStopWhileWaitingForBackoff(t *testing.T) {
	script, marks, _, _, env := wrapper(t)
	p := startTestkit(t, Spec{Path: script, Env: env}, testEnv(t, Backoff{Initial: time.Hour, Max: time.Hour}), Hooks{})
	kill(t, p)
	waitFor(t, "the next attempt to be planned", func() bool { return p.Status().NextAttempt != "" })
	p.Stop(context.Background())
	if st := p.Status(); st.State != StateStopped || st.NextAttempt != "" {
		t.Fatalf("status after Stop = %+v", st)
	}
	if got := len(starts(t, marks)); got != 1 {
		t.Fatalf("started %d times, want 1", got)
	}
}

// TestCrashLoopNeverGivesUp: ten crashes in a row (far more than the old
// limit of five a minute) and the plugin is back each time; the call after
// the last crash succeeds.
func TestCrashLoopNeverGivesUp(t *testing.T) {
	restarted := make(chan struct{}, 100)
	downs := make(chan struct{}, 100)
	p := startTestkit(t, Spec{}, testEnv(t, Backoff{Initial: time.Millisecond, Max: 20 * time.Millisecond}), Hooks{
		Restarted: func(*Process) { restarted <- struct{}{} },
		Down:      func(*Process, error) { downs <- struct{}{} },
		Failed:    func(*Process, error) { t.Error("Failed hook ran: a plugin that ran once must never be given up") },
	})
	pids := map[int]bool{}
	for i := 0; i < 10; i++ {
		pids[kill(t, p)] = true
		waitFor(t, "the plugin to come back", func() bool { return p.Status().State == StateRunning })
	}
	out, err := call(p, "testkit_echo", map[string]any{"message": "back"})
	if err != nil {
		t.Fatalf("call after the last crash: %v", err)
	}
	if out["message"] != "back" {
		t.Fatalf("echo = %v", out)
	}
	st := p.Status()
	if st.Restarts != 10 || len(pids) != 10 || pids[st.PID] {
		t.Fatalf("restarts = %d, distinct crashed pids = %d, current pid reused = %v", st.Restarts, len(pids), pids[st.PID])
	}
	if len(restarted) != 10 || len(downs) != 10 {
		t.Fatalf("hooks: restarted %d, down %d; want 10 each", len(restarted), len(downs))
	}
	if st.LastExit != "signal: killed" {
		t.Fatalf("last exit = %q", st.LastExit)
	}
}

// TestCallWhileDownAnswersFast: while the next attempt is far off, a call
// gets 503 ERR_PLUGIN_UNAVAILABLE with retry_after_ms at once, and the
// status says why and when.
func TestCallWhileDownAnswersFast(t *testing.T) {
	p := startTestkit(t, Spec{}, testEnv(t, Backoff{Initial: 10 * time.Minute, Max: 10 * time.Minute}), Hooks{})
	_, err := call(p, "testkit_exit", map[string]any{"code": 7, "stderr": "testkit: disk on fire"})
	if err == nil {
		t.Fatal("a call that kills its plugin succeeded")
	}
	waitFor(t, "the next attempt to be planned", func() bool { return p.Status().NextAttempt != "" })
	_, err = call(p, "testkit_echo", map[string]any{"message": "hi"})
	e := typed(t, err, 503, "ERR_PLUGIN_UNAVAILABLE")
	ms, _ := e.Details["retry_after_ms"].(int64)
	if ms <= awaitBudget.Milliseconds() || ms > (10*time.Minute).Milliseconds() {
		t.Fatalf("retry_after_ms = %v (%T), want the time until the next attempt", e.Details["retry_after_ms"], e.Details["retry_after_ms"])
	}
	st := p.Status()
	if st.State != StateRestarting {
		t.Fatalf("state = %s", st.State)
	}
	// The line travels apart from the exit status (go-plugin streams a
	// plugin's stderr over gRPC), so it may land just after the exit.
	waitFor(t, "the last exit to carry the stderr line", func() bool {
		st = p.Status()
		return st.LastExit == "exit status 7; last stderr line: testkit: disk on fire"
	})
	next, err := time.Parse("2006-01-02T15:04:05.000Z", st.NextAttempt)
	if err != nil || !next.After(time.Now().Add(awaitBudget)) {
		t.Fatalf("next attempt = %q (%v)", st.NextAttempt, err)
	}
}

// TestLaunchFailuresBackOffAndRecover: restarts that fail (the binary
// exits before its handshake) are retried, not fatal; once the cause goes
// away the plugin comes back and answers.
func TestLaunchFailuresBackOffAndRecover(t *testing.T) {
	script, marks, _, broken, env := wrapper(t)
	failed := make(chan struct{}, 1)
	p := startTestkit(t, Spec{Path: script, Env: env}, testEnv(t, Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond}), Hooks{
		Failed: func(*Process, error) { failed <- struct{}{} },
	})
	if err := os.WriteFile(broken, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	kill(t, p)
	waitFor(t, "several failed restarts", func() bool { return len(starts(t, marks)) >= 5 })
	st := p.Status()
	if st.State != StateRestarting || !strings.HasPrefix(st.LastError, "restart failed: ") {
		t.Fatalf("status during failed restarts = %+v", st)
	}
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the plugin to come back", func() bool { return p.Status().State == StateRunning })
	if _, err := call(p, "testkit_echo", map[string]any{"message": "ok"}); err != nil {
		t.Fatal(err)
	}
	if len(failed) != 0 {
		t.Fatal("Failed hook ran for a restart failure")
	}
}
