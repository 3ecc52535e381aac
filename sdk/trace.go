package sdk

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// TraceID is the W3C trace id (32 hex digits) of the tool call running in
// ctx, or "" when the call is not traced. A tool that writes a record keeps
// it beside the record so the record leads back to the call's trace
// (docs/decisions.md D38).
func TraceID(ctx context.Context) string { return telemetry.TraceID(ctx) }

// traceCall puts the request's trace context in ctx and, when this plugin
// exports traces, starts the call's span ("cairn.plugin <tool>") under it;
// end closes the span with the result's status. An untraced request to a
// plugin that does not export costs one string comparison and one atomic
// load.
func traceCall(ctx context.Context, c seam.Call) (_ context.Context, end func(seam.Result)) {
	ctx = telemetry.WithRemote(ctx, c.TraceParent, c.TraceState)
	if !telemetry.On() {
		return ctx, func(seam.Result) {}
	}
	ctx, span := telemetry.Start(ctx, "cairn.plugin "+c.Tool, trace.SpanKindServer,
		attribute.String("mcp.tool.name", c.Tool), attribute.String("cairn.request_id", c.RequestID))
	return ctx, func(res seam.Result) {
		if e := res.Err; e != nil {
			span.SetStatus(codes.Error, e.Code)
		}
		span.End()
	}
}
