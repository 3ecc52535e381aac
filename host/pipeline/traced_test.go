package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/host/internal/otlptest"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

const clientParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// Without tracing the call reaches dispatch with the trace context it came
// with: a plugin still learns the client's trace (D38).
func TestUntracedPipelinePassesTheClientsContext(t *testing.T) {
	var got string
	p := New(func(_ context.Context, c *Call) *seam.Result { got = c.TraceParent; return &seam.Result{Status: 200} }, Recover(hclog.NewNullLogger()))
	p.Run(context.Background(), &Call{Name: "x", TraceParent: clientParent})
	if got != clientParent {
		t.Fatalf("dispatch saw traceparent %q, want the client's %q", got, clientParent)
	}
}

// With tracing each stage runs in a span, the child of the one before, and
// the call leaves for its plugin with the dispatch span as its parent; a
// refused call's spans end at the stage that refused it.
func TestTracedPipelineSpansEveryStage(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Endpoint())
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	stop, err := telemetry.Setup(context.Background(), "cairn-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop(context.Background()) })
	var sent string
	p := New(func(_ context.Context, c *Call) *seam.Result { sent = c.TraceParent; return &seam.Result{Status: 200} },
		Recover(hclog.NewNullLogger()), Identify(""))
	ctx, span := telemetry.Start(telemetry.WithRemote(context.Background(), clientParent, ""), "cairn.host tools/call x", trace.SpanKindServer)
	p.Run(ctx, &Call{Name: "x"})
	span.End()

	names := []string{"cairn.host tools/call x", "cairn.pipeline recover", "cairn.pipeline identify", "cairn.pipeline dispatch"}
	spans := rcv.WaitTrace("4bf92f3577b34da6a3ce929d0e0e4736", 10*time.Second, names...)
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	parent := "00f067aa0ba902b7"
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			t.Fatalf("no span %q in %v", n, spans)
		}
		if s.ParentID != parent {
			t.Errorf("span %q has parent %s, want %s", n, s.ParentID, parent)
		}
		parent = s.SpanID
	}
	if !strings.Contains(sent, "-"+byName["cairn.pipeline dispatch"].SpanID+"-") {
		t.Errorf("the call left with traceparent %q, want the dispatch span %s as its parent", sent, byName["cairn.pipeline dispatch"].SpanID)
	}

	// A refused call: its last span is the filter's.
	refusing := New(echo, Recover(hclog.NewNullLogger()), Filter(nil))
	ctx, span = telemetry.Start(context.Background(), "refused", trace.SpanKindServer)
	out := refusing.Run(ctx, &Call{Name: "missing"})
	span.End()
	if out.Err == nil || out.Err.Code != errs.NotFound {
		t.Fatalf("a call with no tool: %+v", out)
	}
	traceID := telemetry.TraceID(ctx)
	got := rcv.WaitTrace(traceID, 10*time.Second, "cairn.pipeline filter")
	for _, s := range got {
		if s.Name == "cairn.pipeline dispatch" {
			t.Error("a refused call reached the dispatch span")
		}
	}
}
