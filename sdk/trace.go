package sdk

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
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
func traceCall(ctx context.Context, req *pb.CallToolRequest) (_ context.Context, end func(*pb.ToolResult)) {
	ctx = telemetry.WithRemote(ctx, req.Traceparent, req.Tracestate)
	if !telemetry.On() {
		return ctx, func(*pb.ToolResult) {}
	}
	ctx, span := telemetry.Start(ctx, "cairn.plugin "+req.Tool, trace.SpanKindServer,
		attribute.String("mcp.tool.name", req.Tool), attribute.String("cairn.request_id", req.RequestId))
	return ctx, func(res *pb.ToolResult) {
		if e := res.GetError(); e != nil {
			span.SetStatus(codes.Error, e.GetCode())
		}
		span.End()
	}
}
