package sdk

import (
	"context"
	"testing"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// BenchmarkTraceCall is what tracing adds to each call a plugin serves:
// "off" with no trace context and no exporter (the default: a string
// comparison and an atomic load, no allocation), "carried" with the
// host's traceparent but no exporter here, "on" with a span exported
// (docs/decisions.md D38).
func BenchmarkTraceCall(b *testing.B) {
	traced := seam.Call{Tool: "x", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	res := seam.Result{}
	run := func(b *testing.B, req seam.Call) {
		b.ReportAllocs()
		for b.Loop() {
			_, end := traceCall(context.Background(), req)
			end(res)
		}
	}
	b.Run("off", func(b *testing.B) { run(b, seam.Call{Tool: "x"}) })
	b.Run("carried", func(b *testing.B) { run(b, traced) })
	b.Run("on", func(b *testing.B) {
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		stop, err := telemetry.Setup(context.Background(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 0)
			defer cancel()
			_ = stop(ctx)
		}()
		run(b, traced)
	})
}

// BenchmarkServedCall is one call through the SDK's server (validation,
// handler, encoding) untraced, with tracing off: the path every call of a
// plugin takes by default.
func BenchmarkServedCall(b *testing.B) {
	s := &server{p: countPlugin()}
	req := &pb.CallToolRequest{Tool: "calltest_count", Arguments: []byte(`{"n":3}`)}
	b.ReportAllocs()
	for b.Loop() {
		if res := s.callProto(context.Background(), req, func(*pb.CallToolEvent) {}); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
}
