package telemetry_test

import (
	"context"
	"fmt"
	"log"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// traceparent is a W3C trace context as a caller sends it in _meta.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// A process calls Setup first thing in main and stop on its way out;
// without OTEL_EXPORTER_OTLP_ENDPOINT both do nothing. It needs the
// process's environment, so this example only compiles.
func ExampleSetup() {
	ctx := context.Background()
	stop, err := telemetry.Setup(ctx, "cairn-plugin-notes")
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = stop(ctx) }()
	// ... serve ...
}

// On guards the work a span needs, so an untraced call pays nothing.
func ExampleOn() {
	ctx := context.Background()
	if telemetry.On() {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "cairn.notes index", trace.SpanKindInternal)
		defer span.End()
	}
	_ = ctx
	fmt.Println(telemetry.On()) // no Setup in this process
	// Output: false
}

// A server starts its first span of a call under the caller's trace
// context; the span shares the caller's trace.
func ExampleStart() {
	ctx := telemetry.WithRemote(context.Background(), traceparent, "")
	if telemetry.On() {
		var span trace.Span
		ctx, span = telemetry.Start(ctx, "cairn.plugin tools/call", trace.SpanKindServer,
			attribute.String("mcp.tool.name", "note_add"))
		defer span.End()
	}
	fmt.Println(telemetry.TraceID(ctx))
	// Output: 4bf92f3577b34da6a3ce929d0e0e4736
}

// WithRemote reads the trace context a call carried; a malformed one
// leaves the call untraced.
func ExampleWithRemote() {
	fmt.Println(telemetry.TraceID(telemetry.WithRemote(context.Background(), traceparent, "vendor=1")))
	fmt.Printf("%q\n", telemetry.TraceID(telemetry.WithRemote(context.Background(), "not-a-traceparent", "")))
	// Output:
	// 4bf92f3577b34da6a3ce929d0e0e4736
	// ""
}

// Parent is what a call passes on to the next process.
func ExampleParent() {
	ctx := telemetry.WithRemote(context.Background(), traceparent, "vendor=1")
	tp, ts := telemetry.Parent(ctx)
	fmt.Println(tp, ts)
	tp, _ = telemetry.Parent(context.Background())
	fmt.Printf("%q\n", tp)
	// Output:
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=1
	// ""
}

// TraceID goes into logs and error answers, so a report can be matched
// with its trace.
func ExampleTraceID() {
	fmt.Printf("%q\n", telemetry.TraceID(context.Background()))
	fmt.Println(telemetry.TraceID(telemetry.WithRemote(context.Background(), traceparent, "")))
	// Output:
	// ""
	// 4bf92f3577b34da6a3ce929d0e0e4736
}
