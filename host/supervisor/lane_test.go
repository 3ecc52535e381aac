package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

func laneOf(p *Process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lane != nil
}

// TestCallsTakeTheLane: a plugin on this SDK offers a call lane and the
// host uses it for every call: results, a handler's panic, a deadline
// (which reaches the handler), progress, and a plugin that dies mid-call
// all answer as they do over gRPC.
func TestCallsTakeTheLane(t *testing.T) {
	env := testEnv(t, Backoff{Initial: 10 * time.Minute, Max: 10 * time.Minute})
	p := startTestkit(t, Spec{}, env, Hooks{})
	if !laneOf(p) {
		t.Fatal("the plugin offered no call lane, or the host did not dial it")
	}
	if out, err := call(p, "testkit_echo", map[string]any{"message": "hi"}); err != nil || out["message"] != "hi" {
		t.Fatalf("echo: %v, %v", out, err)
	}
	if _, err := call(p, "testkit_panic", map[string]any{}); err == nil {
		t.Fatal("a panicking handler answered without an error")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := p.callTool(ctx, seam.Call{Tool: "testkit_sleep", Args: []byte(`{"ms":20000,"marker":"lane"}`)}, nil, nil, false)
	// Host and plugin share the deadline: either the host gives up first
	// or the plugin's answer (the handler's cancellation) arrives first.
	if err != nil {
		typed(t, err, 499, "ERR_CANCELLED")
	} else if res.Err == nil {
		t.Fatalf("a call past its deadline succeeded: %v", res)
	}
	waitFor(t, "the handler to see the deadline", func() bool {
		_, err := os.Stat(filepath.Join(env.DataDir, "cancelled-lane"))
		return err == nil
	})

	var steps int
	res, err = p.callTool(context.Background(), seam.Call{Tool: "testkit_sleep", Args: []byte(`{"ms":50}`), WantsProgress: true}, func(seam.Progress) { steps++ }, nil, false)
	if err != nil || res.Err != nil || steps == 0 {
		t.Fatalf("a call with progress: %v, %v, %d progress notes", res, err, steps)
	}
	if !laneOf(p) {
		t.Fatal("the lane was dropped while the plugin ran")
	}

	done := make(chan error, 1)
	go func() {
		_, err := call(p, "testkit_exit", map[string]any{"code": 3})
		done <- err
	}()
	select {
	case err := <-done:
		typed(t, err, 503, "ERR_PLUGIN_UNAVAILABLE")
	case <-time.After(20 * time.Second):
		t.Fatal("a call whose plugin died hung")
	}
}

// TestCallLaneOffUsesGRPC: with CAIRN_CALL_LANE=off (as with a plugin on an
// older SDK, which names no lane) calls go over gRPC.
func TestCallLaneOffUsesGRPC(t *testing.T) {
	t.Setenv("CAIRN_CALL_LANE", "off")
	p := startTestkit(t, Spec{}, testEnv(t, Backoff{}), Hooks{})
	if laneOf(p) {
		t.Fatal("the host dialled a lane it was told not to use")
	}
	if out, err := call(p, "testkit_echo", map[string]any{"message": "hi"}); err != nil || out["message"] != "hi" {
		t.Fatalf("echo over gRPC: %v, %v", out, err)
	}
}

// TestProgressAndLogLinesPrecedeTheResult: a call that asks for progress
// and log lines gets them in the order the handler sent them, every one
// before the result, on the plugin's one call transport: the lane, or with
// CAIRN_CALL_LANE=off the CallTool stream (docs/decisions.md D34).
func TestProgressAndLogLinesPrecedeTheResult(t *testing.T) {
	for _, transport := range []string{"lane", "stream"} {
		t.Run(transport, func(t *testing.T) {
			if transport == "stream" {
				t.Setenv("CAIRN_CALL_LANE", "off")
			}
			p := startTestkit(t, Spec{}, testEnv(t, Backoff{}), Hooks{})
			if laneOf(p) != (transport == "lane") {
				t.Fatalf("lane in use = %v on the %s transport", laneOf(p), transport)
			}
			var mu sync.Mutex
			var got []string
			returned := false
			record := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				if returned {
					t.Errorf("%s arrived after the result", s)
				}
				got = append(got, s)
			}
			c := &pipeline.Call{Name: "testkit_sleep", Args: []byte(`{"ms":60,"log":true}`), LogLevel: "info",
				Progress: func(progress, _ float64, message string) { record(fmt.Sprintf("progress %g %s", progress, message)) },
				Log:      func(level, _ string, data json.RawMessage) { record(fmt.Sprintf("log %s %s", level, data)) }}
			res := p.Call(context.Background(), c, CallOptions{})
			mu.Lock()
			returned = true
			events := append([]string(nil), got...)
			mu.Unlock()
			if res.Err != nil || res.Status != 201 {
				t.Fatalf("call: %+v", res)
			}
			if len(events) < 2 || len(events)%2 != 0 {
				t.Fatalf("events = %q, want progress and log line pairs", events)
			}
			for i := 0; i < len(events); i += 2 {
				step := i/2 + 1
				if want := fmt.Sprintf("progress %d step %d", step, step); events[i] != want {
					t.Fatalf("event %d = %q, want %q (all: %q)", i, events[i], want, events)
				}
				if want := fmt.Sprintf(`log info "step %d"`, step); events[i+1] != want {
					t.Fatalf("event %d = %q, want %q (all: %q)", i+1, events[i+1], want, events)
				}
			}
		})
	}
}
