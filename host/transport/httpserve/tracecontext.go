package httpserve

import (
	"context"
	"net/http"
)

// traceContextKey carries an HTTP request's W3C trace context headers.
type traceContextKey struct{}

type traceContext struct{ parent, state string }

// WithTraceContext puts r's traceparent and tracestate headers, if any, in
// its context: the tool handler starts the call's trace under them unless
// the call's _meta names its own (docs/decisions.md D38).
func WithTraceContext(r *http.Request) *http.Request {
	tp := r.Header.Get("traceparent")
	if tp == "" {
		return r
	}
	tc := traceContext{parent: tp, state: r.Header.Get("tracestate")}
	return r.WithContext(context.WithValue(r.Context(), traceContextKey{}, tc))
}

// TraceContext returns the traceparent and tracestate headers of the HTTP
// request in ctx; empty when it sent none.
func TraceContext(ctx context.Context) (traceparent, tracestate string) {
	tc, _ := ctx.Value(traceContextKey{}).(traceContext)
	return tc.parent, tc.state
}
