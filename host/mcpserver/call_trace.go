package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk/seam"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// callTraceContext is the W3C trace context an MCP call came with
// (docs/decisions.md D38): _meta.traceparent and _meta.tracestate, where the
// 2026-07-28 revision carries it on either transport and where a relay puts
// its own span's, else the HTTP request's traceparent header. Empty for an
// untraced call.
func callTraceContext(ctx context.Context, req mcp.CallToolRequest) (traceparent, tracestate string) {
	if m := req.Params.Meta; m != nil {
		if tp, _ := m.AdditionalFields["traceparent"].(string); tp != "" {
			ts, _ := m.AdditionalFields["tracestate"].(string)
			return tp, ts
		}
	}
	return httpserve.TraceContext(ctx)
}

// tracedCall runs the call in the host's span for it, "cairn.host
// tools/call <tool>", a child of the trace context it came with (or the
// root of a new trace); the pipeline's stage spans are its children.
func (srv *Server) tracedCall(ctx context.Context, name string, req mcp.CallToolRequest, task *seam.TaskParams, turn *approvalTurn) *seam.Result {
	traceparent, tracestate := callTraceContext(ctx, req)
	ctx, span := telemetry.Start(telemetry.WithRemote(ctx, traceparent, tracestate), "cairn.host tools/call "+name,
		trace.SpanKindServer, attribute.String("mcp.method.name", "tools/call"), attribute.String("mcp.tool.name", name))
	defer span.End()
	out := srv.runCall(ctx, name, req, task, turn)
	if out.Err != nil {
		span.SetStatus(codes.Error, "the tool answered with an error")
	}
	return out
}
