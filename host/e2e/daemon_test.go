package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The shared daemon: many `cairn serve` processes on one data dir relay to
// one daemon that owns the plugins and the stores.

// daemonEnv turns the shared daemon on for a workspace (the harness turns it
// off for the other tests) with a short idle period.
var daemonEnv = []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=3s", "CAIRN_PROJECT=web"}

// callOK calls a tool and returns its structured result or an error.
func callOK(s *session, tool string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.callCtx(ctx, tool, args)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", tool, err)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	if res.IsError {
		return nil, fmt.Errorf("%s %v: %v", tool, args, out)
	}
	return out, nil
}

func daemonPID(t *testing.T, w *workspace) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.dataDir(), "daemon.json"))
	if err != nil {
		return 0
	}
	var info struct {
		PID int `json:"pid"`
	}
	_ = json.Unmarshal(raw, &info)
	return info.PID
}

func runShared(t *testing.T, sessions int) {
	w := newWorkspace(t)
	// All sessions start at the same instant on a fresh data dir: the
	// start-up race must end with one daemon serving everyone.
	all := startSessions(t, w, sessions, func(i int) []string {
		return append(daemonEnv, fmt.Sprintf("CAIRN_AGENT_ID=agent-%d", i))
	})
	logText, _ := os.ReadFile(filepath.Join(w.dataDir(), "daemon.log"))
	if n := strings.Count(string(logText), "daemon ready"); n != 1 || strings.Contains(string(logText), "another daemon") {
		t.Fatalf("%d daemons started for %d simultaneous cairn serve, want 1:\n%s", n, sessions, logText)
	}

	// Two tasks every agent records on.
	var shared []string
	for i := 0; i < 2; i++ {
		out, err := callOK(all[0], "task_create", map[string]any{"title": fmt.Sprintf("shared %d", i), "project": "web"})
		if err != nil {
			t.Fatal(err)
		}
		shared = append(shared, out["task_id"].(string))
	}
	var (
		ids  []string
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	thought := map[string]string{} // thought id → agent
	for i, s := range all {
		wg.Add(1)
		go func(i int, s *session) {
			defer wg.Done()
			agent := fmt.Sprintf("agent-%d", i)
			for j := 0; j < 5; j++ {
				out, err := callOK(s, "task_create", map[string]any{"title": fmt.Sprintf("%s task %d", agent, j), "project": "web"})
				if err == nil {
					mu.Lock()
					ids = append(ids, out["task_id"].(string))
					mu.Unlock()
					out, err = callOK(s, "thought_record", map[string]any{"task_id": shared[j%2], "type": "decision", "content": fmt.Sprintf("%s decision %d", agent, j)})
				}
				if err == nil && out["recorded_by"] != agent {
					err = fmt.Errorf("thought recorded_by %v, want the session's own agent %s", out["recorded_by"], agent)
				}
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				thought[out["thought_id"].(string)] = agent
				mu.Unlock()
			}
		}(i, s)
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	first := all[0]
	sort.Strings(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("task id %s handed out twice", ids[i])
		}
	}
	if len(ids) != 5*sessions || len(thought) != 5*sessions {
		t.Fatalf("%d tasks and %d thoughts, want %d each", len(ids), len(thought), 5*sessions)
	}
	for _, id := range shared {
		v, err := callOK(first, "audit_verify_chain", map[string]any{"task_id": id})
		if err != nil || v["chain_valid"] != true {
			t.Fatalf("chain of %s after concurrent appends: %v %v", id, v, err)
		}
	}

	// One daemon served everyone; cairn status sees every session.
	code, out, stderr := runCairn(t, w, "", nil, "status", "--json")
	if code != 0 {
		t.Fatalf("cairn status: %d %s", code, stderr)
	}
	var st struct {
		PID      int              `json:"pid"`
		Sessions []map[string]any `json:"sessions"`
		Health   struct {
			Plugins []map[string]any `json:"plugins"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if st.PID != daemonPID(t, w) || len(st.Sessions) != sessions || len(st.Health.Plugins) == 0 {
		t.Fatalf("status %s (daemon.json pid %d)", out, daemonPID(t, w))
	}
	agents := map[any]bool{}
	for _, se := range st.Sessions {
		agents[se["agent_id"]] = true
	}
	if len(agents) != sessions || !agents["agent-0"] || !agents[fmt.Sprintf("agent-%d", sessions-1)] {
		t.Errorf("status lists agents %v, want agent-0 … agent-%d", agents, sessions-1)
	}
}

func TestDaemonSharedByTwoServes(t *testing.T)   { runShared(t, 2) }
func TestDaemonSharedByEightServes(t *testing.T) { runShared(t, 8) }

// Killing the daemon with SIGKILL mid-session: the relay starts a fresh
// daemon over the stale socket and resumes the session (D21), a second
// `cairn serve` shares that daemon, and every acknowledged write is there.
func TestDaemonKilledLosesNoAcknowledgedWrite(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	var hashes []string
	for i := 0; i < 10; i++ {
		out, err := callOK(s, "task_create", map[string]any{"title": fmt.Sprintf("t%d", i), "project": "web"})
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, out["task_id"].(string))
		th, err := callOK(s, "thought_record", map[string]any{"task_id": acked[0], "type": "decision", "content": fmt.Sprintf("d%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, th["hash"].(string))
	}
	pid := daemonPID(t, w)
	if pid == 0 || pid == s.cmd.Process.Pid {
		t.Fatalf("daemon pid %d (relay %d)", pid, s.cmd.Process.Pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The same session answers again, on a fresh daemon.
	if _, err := callOK(s, "task_get", map[string]any{"task_id": acked[0]}); err != nil {
		t.Fatalf("the session did not survive its daemon: %v", err)
	}
	if !processAlive(s.cmd.Process.Pid) {
		t.Fatal("the relay ended when its daemon died")
	}
	t.Cleanup(s.close)

	s2, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.close)
	if np := daemonPID(t, w); np == pid || np == 0 {
		t.Fatalf("no fresh daemon: pid %d, killed %d", np, pid)
	}
	for _, id := range acked {
		if _, err := callOK(s2, "task_get", map[string]any{"task_id": id}); err != nil {
			t.Errorf("acknowledged task lost: %v", err)
		}
	}
	l, err := callOK(s2, "thought_record_list", map[string]any{"task_id": acked[0], "verify_chain": true})
	if err != nil {
		t.Fatal(err)
	}
	got := l["thoughts"].([]any)
	if len(got) != len(hashes) || l["chain_valid"] != true {
		t.Fatalf("thoughts after the kill: %d (want %d), valid %v", len(got), len(hashes), l["chain_valid"])
	}
	for i, th := range got {
		if th.(map[string]any)["hash"] != hashes[i] {
			t.Fatalf("thought %d changed", i)
		}
	}
}

// cairn stop stops the daemon cleanly (no plugin left), and an idle daemon
// exits on its own after its last session.
func TestDaemonStopAndIdleExit(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	pid := daemonPID(t, w)
	if code, out, stderr := runCairn(t, w, "", daemonEnv, "stop"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("cairn stop: %d %s %s", code, out, stderr)
	}
	if processAlive(pid) {
		t.Fatalf("daemon %d still alive after cairn stop", pid)
	}
	s.close()
	// "Not running" is an answer on stdout with status 3; stopping what
	// does not run is done (0) (docs/cli.md).
	if code, out, stderr := runCairn(t, w, "", daemonEnv, "status"); code != 3 || !strings.Contains(out, "no cairn daemon") || stderr != "" {
		t.Fatalf("status after stop: exit %d, stdout %q, stderr %q; want 3 and the answer on stdout", code, out, stderr)
	}
	if code, out, _ := runCairn(t, w, "", daemonEnv, "status", "--json"); code != 3 || !strings.Contains(out, `"running":false`) {
		t.Fatalf("status --json after stop: exit %d, %s", code, out)
	}
	if code, out, _ := runCairn(t, w, "", daemonEnv, "stop"); code != 0 || !strings.Contains(out, "no cairn daemon") {
		t.Fatalf("stop with no daemon: exit %d, %s", code, out)
	}

	s, err = startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	pid = daemonPID(t, w)
	s.close()
	eventually(t, 30*time.Second, "the idle daemon to exit", func() bool { return !processAlive(pid) })
	if _, err := os.Stat(filepath.Join(w.dataDir(), "daemon.sock")); !os.IsNotExist(err) {
		t.Fatalf("socket left after a clean exit: %v", err)
	}
}

// While a daemon holds the core store, `cairn project add` registers the
// project through the daemon's bus instead of failing on the locked store.
func TestProjectAddThroughDaemon(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	code, out, stderr := runCairn(t, w, "", daemonEnv, "project", "add", "mobile")
	if code != 0 || !strings.Contains(out, "through the running daemon") {
		t.Fatalf("project add with a daemon running: %d %s %s", code, out, stderr)
	}
	eventually(t, patience, "project mobile to be usable", func() bool {
		_, err := callOK(s, "task_create", map[string]any{"title": "first mobile task", "project": "mobile"})
		return err == nil
	})
	if code, _, stderr := runCairn(t, w, "", daemonEnv, "project", "add", "Not-A-Slug"); code == 0 || !strings.Contains(stderr, "ERR_INVALID_INPUT") {
		t.Fatalf("bad slug: %d %s", code, stderr)
	}
}
