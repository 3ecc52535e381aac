package httpserve

import (
	"net/http/httptest"
	"testing"
)

// The traceparent and tracestate headers reach the tool handler's context;
// a request without them carries none (D38).
func TestTraceContextHeaders(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "/mcp", nil)
	if tp, ts := TraceContext(WithTraceContext(r).Context()); tp != "" || ts != "" {
		t.Fatalf("a request without headers carries %q %q", tp, ts)
	}
	r.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	r.Header.Set("tracestate", "vendor=x")
	tp, ts := TraceContext(WithTraceContext(r).Context())
	if tp != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || ts != "vendor=x" {
		t.Fatalf("headers read as %q %q", tp, ts)
	}
}
