package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// testkitBin is the real test plugin (host/internal/testkit), built once.
var testkitBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cairn-supervisor-test-")
	if err != nil {
		panic(err)
	}
	testkitBin = filepath.Join(dir, "cairn-plugin-testkit")
	cmd := exec.Command("go", "build", "-o", testkitBin, "github.com/cairn-mcp/cairn/host/internal/testkit/cmd/cairn-plugin-testkit")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build testkit:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func testEnv(t *testing.T, b Backoff) Env {
	t.Helper()
	return Env{
		Root: t.TempDir(), DataDir: t.TempDir(), Mode: "FULL", HostVersion: "test",
		Logger: hclog.New(&hclog.LoggerOptions{Output: newTestWriter(t), Level: hclog.Debug}),
		Bus:    events.New(hclog.NewNullLogger()), StartTimeout: 30 * time.Second, Backoff: b,
	}
}

// testWriter sends plugin logs to the test log, shown on failure, until
// the test ends (go-plugin's goroutines may log a little later).
type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func newTestWriter(t *testing.T) *testWriter {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func startTestkit(t *testing.T, spec Spec, env Env, hooks Hooks) *Process {
	t.Helper()
	if spec.Name == "" {
		spec.Name = "testkit"
	}
	if spec.Path == "" {
		spec.Path = testkitBin
	}
	if spec.Source == "" {
		spec.Source = "config"
	}
	p, err := Start(context.Background(), spec, env, hooks)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

// call runs a tool through the supervisor's public API and returns its
// JSON output or its error (the plugin's typed error included).
func call(p *Process, tool string, args any) (map[string]any, error) {
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := p.Call(ctx, &pipeline.Call{Name: tool, Args: raw, Caller: seam.Caller{ID: "test"}}, CallOptions{})
	if res.Err != nil {
		return nil, res.Err
	}
	var out map[string]any
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// kill crashes the plugin from outside and waits until the supervisor has
// noticed (the state is no longer running with that pid).
func kill(t *testing.T, p *Process) int {
	t.Helper()
	pid := p.PID()
	if pid == 0 {
		t.Fatal("plugin has no pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the supervisor to notice the crash", func() bool {
		st := p.Status()
		return st.State != StateRunning || st.PID != pid
	})
	return pid
}

// typed asserts err is a typed error with the given status and code.
func typed(t *testing.T, err error, status int, code string) *errs.Error {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v (%T) is not typed", err, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("error = %d %s (%s), want %d %s", e.Status, e.Code, e.Message, status, code)
	}
	return e
}
