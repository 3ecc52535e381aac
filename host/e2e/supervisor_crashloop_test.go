package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// TestPluginCrashLoopKeepsComingBack: a plugin that crashes ten times in a
// row is restarted every time (no "failed for good"); while it is down a
// call answers 503 ERR_PLUGIN_UNAVAILABLE with retry_after_ms, and after
// the last crash the next call succeeds.
func TestPluginCrashLoopKeepsComingBack(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t, testkitBin)
	w.addPlugin("testkit", testkitBin)
	// A short cap keeps ten crashes within a few seconds.
	s := w.serve(trustEnv, "CAIRN_PLUGIN_RESTART_MAX=1s")
	pids := map[float64]bool{}
	unavailable := 0
	for i := 0; i < 10; i++ {
		pid := structured(t, s.call("testkit_pid", map[string]any{}))["pid"].(float64)
		if pids[pid] {
			t.Fatalf("crash %d: pid %v was seen before", i, pid)
		}
		pids[pid] = true
		res := s.call("testkit_exit", map[string]any{"code": 3, "stderr": "testkit: crash on purpose"})
		if !res.IsError {
			t.Fatalf("crash %d: the exiting call succeeded", i)
		}
		if i == 9 {
			// Late in the loop the wait is at its 1 s cap: health shows the
			// plugin down with why it last exited and when it comes back.
			tk := pluginHealth(t, s, "testkit")
			if le, _ := tk["last_exit"].(string); !strings.Contains(le, "crash on purpose") && !strings.Contains(le, "3") {
				t.Errorf("server_health last_exit = %q, want the exit code or its last stderr line", le)
			}
			// Between the exit and the planned attempt there is a moment
			// with no time to show yet; poll past it.
			if !poll.Within(patience, func() bool {
				if tk["state"] != "running" && tk["next_attempt"] == nil {
					tk = pluginHealth(t, s, "testkit")
				}
				return tk["state"] == "running" || tk["next_attempt"] != nil
			}) {
				t.Errorf("server_health of a restarting plugin has no next_attempt: %v", tk)
			}
		}
		// Calls until it is back: each either succeeds or says when to
		// come back.
		for attempt := 0; ; attempt++ {
			res := s.call("testkit_echo", map[string]any{"message": "back"})
			if !res.IsError {
				break
			}
			e := structured(t, res)["error"].(map[string]any)
			details, _ := e["details"].(map[string]any)
			retry, ok := details["retry_after_ms"].(float64)
			if e["code"] != "ERR_PLUGIN_UNAVAILABLE" || metaStatus(res) != 503 || !ok || retry <= 0 {
				t.Fatalf("crash %d: call while down = %v (status %v)", i, e, metaStatus(res))
			}
			if !strings.Contains(e["message"].(string), "restarting") {
				t.Fatalf("crash %d: message %q does not say the plugin is restarting", i, e["message"])
			}
			unavailable++
			if attempt > 20 {
				t.Fatalf("crash %d: still down after %d answers of retry_after_ms", i, attempt)
			}
			// The client honours retry_after_ms, which is under test.
			time.Sleep(time.Duration(retry) * time.Millisecond)
		}
	}
	res := s.call("testkit_echo", map[string]any{"message": "after the last crash"})
	if res.IsError || structured(t, res)["message"] != "after the last crash" {
		t.Fatalf("call after the last crash: %v", structured(t, res))
	}
	t.Logf("10 crashes, %d calls answered 503 with retry_after_ms meanwhile", unavailable)
}
