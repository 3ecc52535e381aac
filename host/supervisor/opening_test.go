package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// A plugin whose open outlasts the start limit (a core store
// after a 100,000-task import) is opening, not failed: Start returns, its
// status names the step, its calls wait and then run, and a call that
// will not wait is told to retry (docs/decisions.md D34).
func TestOpeningPluginIsWaitedForNotFailed(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	env := testEnv(t, Backoff{})
	env.StartTimeout = 2 * time.Second
	var opened atomic.Int32
	started := time.Now()
	p := startTestkit(t, Spec{Env: []string{"TESTKIT_OPEN_GATE=" + gate}}, env, Hooks{Opened: func(*Process) { opened.Add(1) }})

	st := p.Status()
	if st.State != StateOpening || !strings.Contains(st.Opening, "waiting for gate") || st.PID == 0 {
		t.Fatalf("status after Start = %+v, want opening, waiting for gate, with a pid", st)
	}
	if h, err := p.Health(context.Background()); err != nil || h.Status != "opening" || !strings.Contains(h.Message, "waiting for gate") {
		t.Fatalf("health while opening = %+v, %v", h, err)
	}

	// A call that will not wait is refused, never sent.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	res := p.Call(short, &pipeline.Call{Name: "testkit_echo", Args: []byte(`{"message":"early"}`), Caller: seam.Caller{ID: "test"}}, CallOptions{})
	cancel()
	if res.Err == nil {
		t.Fatalf("a call that would not wait ran while the plugin was opening: %s", res.Output)
	}
	e := typed(t, res.Err, 503, errs.PluginUnavailable)
	if e.Details["retryable"] != true || e.Details["applied"] != false || !strings.Contains(e.Message, "still opening") {
		t.Fatalf("short call while opening = %s %v", e.Message, e.Details)
	}

	// A call that waits is held until the open is done.
	answered := make(chan error, 1)
	go func() {
		out, err := call(p, "testkit_echo", map[string]any{"message": "after the open"})
		if err == nil && out["message"] != "after the open" {
			err = errs.Newf(500, errs.Internal, "echo answered %v", out)
		}
		answered <- err
	}()
	// Well past the start limit the plugin is still opening, and the call
	// still waits.
	for time.Since(started) < 2*env.StartTimeout {
		if st := p.Status(); st.State != StateOpening {
			t.Fatalf("plugin left opening before its open was done: %+v", st)
		}
		select {
		case err := <-answered:
			t.Fatalf("call answered while the plugin was opening: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if opened.Load() != 0 {
		t.Fatal("Opened ran before the open was done")
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("call after the open: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held call was not answered after the open")
	}
	waitFor(t, "the plugin to run", func() bool { return p.Status().State == StateRunning })
	if st := p.Status(); st.Opening != "" || st.Restarts != 0 || st.LastError != "" {
		t.Fatalf("status once open = %+v", st)
	}
	waitFor(t, "the Opened hook", func() bool { return opened.Load() == 1 })
}

// A plugin whose open fails exits, and is restarted as after a crash,
// with the error in its status; it does not stay opening.
func TestOpenThatFailsRestartsThePlugin(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	env := testEnv(t, Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond})
	p := startTestkit(t, Spec{Env: []string{"TESTKIT_OPEN_GATE=" + gate, "TESTKIT_OPEN_FAIL=1"}}, env, Hooks{})
	if st := p.Status(); st.State != StateOpening {
		t.Fatalf("status after Start = %+v, want opening", st)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed open to show in the status", func() bool {
		st := p.Status()
		return st.State != StateOpening && strings.Contains(st.LastExit+st.LastError, "testkit index is unreadable")
	})
	// Every later start fails its open too: the plugin is restarted, with
	// backoff, again and again.
	waitFor(t, "a restart", func() bool { return p.Status().Restarts+failuresOf(p) > 1 })
}

func failuresOf(p *Process) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}
