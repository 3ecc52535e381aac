package mcpserver

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/httpserve"
)

// A call's trace context is its _meta's, else its HTTP request's headers
// (D38).
func TestCallTraceContext(t *testing.T) {
	const metaTP, headerTP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("traceparent", headerTP)
	httpCtx := httpserve.WithTraceContext(r).Context()
	withMeta := mcp.CallToolRequest{}
	withMeta.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": metaTP, "tracestate": "vendor=x"}}
	for _, c := range []struct {
		name   string
		ctx    context.Context
		req    mcp.CallToolRequest
		tp, ts string
	}{
		{"_meta", context.Background(), withMeta, metaTP, "vendor=x"},
		{"_meta over the header", httpCtx, withMeta, metaTP, "vendor=x"},
		{"header", httpCtx, mcp.CallToolRequest{}, headerTP, ""},
		{"none", context.Background(), mcp.CallToolRequest{}, "", ""},
	} {
		if tp, ts := callTraceContext(c.ctx, c.req); tp != c.tp || ts != c.ts {
			t.Errorf("%s: %q %q, want %q %q", c.name, tp, ts, c.tp, c.ts)
		}
	}
}
