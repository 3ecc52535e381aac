package e2e

import (
	"context"
	"encoding/json"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/internal/testkit"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// percentiles reports p50 and p99 of the samples in microseconds.
func percentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(q float64) float64 {
		i := int(q * float64(len(samples)-1))
		return float64(samples[i].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkToolCallInProcess runs the same handler through the SDK in the
// same process: validation, decoding, handler and encoding, no transport.
func BenchmarkToolCallInProcess(b *testing.B) {
	p := testkit.New("testkit")
	ctx := sdk.WithCaller(context.Background(), sdk.Caller{ID: "bench"})
	args, _ := json.Marshal(map[string]any{"message": "benchmark"})
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := sdktest.Invoke(ctx, p, "testkit_echo", args)
		samples = append(samples, time.Since(start))
		if res.Err != nil {
			b.Fatal(res.Err)
		}
	}
	b.StopTimer()
	percentiles(b, samples)
}

// BenchmarkRelayResume measures, per iteration, the time from SIGKILL of
// the shared daemon to the first answered call on the same session: the
// relay notices, starts a fresh daemon, resumes the session and replays.
func BenchmarkRelayResume(b *testing.B) {
	t := &testing.T{}
	w := newWorkspace(t)
	w.t = t
	s := w.serve("CAIRN_LOG_LEVEL=warn", "CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=5s")
	defer s.close()
	s.call("server_ping", map[string]any{})
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pid := daemonPID(t, w)
		start := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		res, err := s.callCtx(context.Background(), "task_list", map[string]any{})
		samples = append(samples, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call after the kill: %v %v", err, res)
		}
	}
	b.StopTimer()
	percentiles(b, samples)
}
