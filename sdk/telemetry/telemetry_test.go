package telemetry

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

const (
	parent  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
)

// Without an endpoint, or with the SDK disabled, Setup installs nothing.
func TestOffWithoutEndpoint(t *testing.T) {
	for _, env := range [][2]string{{"OTEL_EXPORTER_OTLP_ENDPOINT", ""}, {"OTEL_SDK_DISABLED", "true"}} {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(env[0], env[1])
		stop, err := Setup(context.Background(), "test")
		if err != nil {
			t.Fatal(err)
		}
		if On() {
			t.Fatalf("%s=%q: tracing is on", env[0], env[1])
		}
		if err := stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// With an endpoint, spans start under a remote parent and hand their own
// context on; stop turns tracing off again.
func TestOnWithEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	stop, err := Setup(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !On() {
		t.Fatal("tracing is off with an endpoint set")
	}
	ctx, span := Start(WithRemote(context.Background(), parent, "vendor=x"), "s", trace.SpanKindInternal)
	tp, ts := Parent(ctx)
	span.End()
	if !strings.HasPrefix(tp, "00-"+traceID+"-") || tp == parent || ts != "vendor=x" {
		t.Fatalf("span's context %q %q: want trace %s, a span of its own, the tracestate kept", tp, ts, traceID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_ = stop(ctx) // nothing listens at the endpoint: the flush fails
	if On() {
		t.Fatal("tracing is still on after stop")
	}
}

// An unsupported OTEL_EXPORTER_OTLP_PROTOCOL is refused by name.
func TestUnsupportedProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := Setup(context.Background(), "test"); err == nil || !strings.Contains(err.Error(), "http/json") {
		t.Fatalf("Setup with protocol http/json: %v", err)
	}
}

// A remote parent gives the call its trace id without any tracing set up;
// a malformed or absent one gives none.
func TestTraceIDOfRemoteParent(t *testing.T) {
	if got := TraceID(WithRemote(context.Background(), parent, "")); got != traceID {
		t.Fatalf("TraceID = %q, want %s", got, traceID)
	}
	for _, tp := range []string{"", "00-zz-00f067aa0ba902b7-01"} {
		ctx := WithRemote(context.Background(), tp, "")
		if got := TraceID(ctx); got != "" {
			t.Fatalf("TraceID of %q = %q, want none", tp, got)
		}
		if p, _ := Parent(ctx); p != "" {
			t.Fatalf("Parent of %q = %q, want none", tp, p)
		}
	}
}
