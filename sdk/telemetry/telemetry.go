// Package telemetry exports OpenTelemetry traces over OTLP from every cairn
// process — relay, daemon, host and plugins, the SDK's included — when the
// standard OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// is set, and installs nothing otherwise: a call then pays one atomic load
// (docs/decisions.md D38). The W3C trace context crosses process boundaries
// as a traceparent and tracestate pair of strings, in _meta on JSON-RPC and
// in CallToolRequest on the plugin protocol.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracer is the process's tracer; nil while tracing is off.
var tracer atomic.Pointer[trace.Tracer]

// On reports whether this process exports traces: callers test it before
// building anything a span needs.
func On() bool { return tracer.Load() != nil }

// configured reports whether the environment asks for traces.
func configured() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup starts exporting this process's spans as service (its service.name
// unless OTEL_SERVICE_NAME says otherwise) when Configured, batching them as
// the OTEL_BSP_* variables say and sending them with the protocol
// OTEL_EXPORTER_OTLP_PROTOCOL names (grpc, the default, or http/protobuf).
// The returned stop flushes what is still batched; it is a no-op when
// tracing stayed off.
func Setup(ctx context.Context, service string) (stop func(context.Context) error, err error) {
	if !configured() {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := exporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", service)), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := tp.Tracer("github.com/cairn-mcp/cairn")
	tracer.Store(&t)
	return func(ctx context.Context) error {
		tracer.Store(nil)
		return tp.Shutdown(ctx)
	}, nil
}

// exporter is the OTLP exporter OTEL_EXPORTER_OTLP_PROTOCOL (or its
// _TRACES_ form) names; both read their endpoint, headers and TLS settings
// from the standard variables themselves.
func exporter(ctx context.Context) (*otlptrace.Exporter, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "grpc":
		return otlptracegrpc.New(ctx)
	case "http/protobuf":
		return otlptracehttp.New(ctx)
	}
	return nil, fmt.Errorf("telemetry: OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported; use grpc or http/protobuf", proto)
}

// Start starts a span named name under the span or remote parent in ctx.
// Only call it when On; kind is the span's role (server for a process's
// first span of a call, internal inside it).
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	t := tracer.Load()
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return (*t).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// w3c reads and writes traceparent and tracestate.
var w3c propagation.TraceContext

// WithRemote returns ctx with the remote parent a traceparent (and its
// tracestate) name; ctx unchanged when traceparent is empty or malformed.
func WithRemote(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return w3c.Extract(ctx, c)
}

// Parent is the traceparent and tracestate that make the span in ctx the
// parent of the next process's spans; empty when ctx holds none.
func Parent(ctx context.Context) (traceparent, tracestate string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	return c["traceparent"], c["tracestate"]
}

// TraceID is the id of the trace the call in ctx belongs to, in hex; empty
// for a call that is not traced.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
