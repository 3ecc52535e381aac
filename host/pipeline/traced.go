package pipeline

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// traced runs a stage's handler in a span named after the stage
// ("cairn.pipeline <stage>"), a child of the span before it, so a trace
// shows where a call spent its time and which stage refused it
// (docs/decisions.md D38).
func traced(stage string, next Handler) Handler {
	name := "cairn.pipeline " + stage
	return func(ctx context.Context, c *Call) *seam.Result {
		ctx, span := telemetry.Start(ctx, name, trace.SpanKindInternal)
		out := next(ctx, c)
		endSpan(span, out)
		return out
	}
}

// tracedDispatch is the dispatch stage's span; the call carries it to the
// plugin as its trace context, so the plugin's span is its child.
func tracedDispatch(dispatch Handler) Handler {
	return func(ctx context.Context, c *Call) *seam.Result {
		ctx, span := telemetry.Start(ctx, "cairn.pipeline dispatch", trace.SpanKindClient, attribute.String("mcp.tool.name", c.Name))
		c.TraceParent, c.TraceState = telemetry.Parent(ctx)
		out := dispatch(ctx, c)
		endSpan(span, out)
		return out
	}
}

// endSpan ends a stage's span with the outcome's status.
func endSpan(span trace.Span, out *seam.Result) {
	if out != nil {
		span.SetAttributes(attribute.Int("cairn.status", out.Status))
		if out.Err != nil {
			span.SetStatus(codes.Error, out.Err.Code)
		}
	}
	span.End()
}
