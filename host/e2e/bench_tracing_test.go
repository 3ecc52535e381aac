package e2e

import (
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/internal/otlptest"
)

// BenchmarkToolCallTracing is one core call (task_list) through relay,
// daemon and plugin with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT, the
// default) and on (exporting to a receiver on loopback): the cost of
// tracing, and that off costs nothing worth measuring (docs/decisions.md D38).
func BenchmarkToolCallTracing(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run(mode, func(b *testing.B) {
			t := &testing.T{}
			w := newWorkspace(t)
			w.t = t
			env := []string{"CAIRN_LOG_LEVEL=warn", "CAIRN_DAEMON=on"}
			if mode == "on" {
				env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+otlptest.Start(b).Endpoint())
			}
			s := w.serve(env...)
			defer s.close()
			defer w.stopDaemon()
			for range 50 {
				s.call("task_list", map[string]any{})
			}
			samples := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res := s.call("task_list", map[string]any{})
				samples = append(samples, time.Since(start))
				if res.IsError {
					b.Fatalf("task_list: %v", res)
				}
			}
			b.StopTimer()
			percentiles(b, samples)
		})
	}
}
