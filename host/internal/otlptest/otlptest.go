// Package otlptest is an OTLP trace receiver for tests: a gRPC
// TraceService on loopback that keeps every span it is sent, so a test can
// check the traces cairn's processes export (docs/decisions.md D38).
package otlptest

import (
	"context"
	"encoding/hex"
	"net"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
)

// Span is one received span, with the service.name of the process that
// sent it. Ids are hex; ParentID is empty for a root span.
type Span struct {
	Service, Name             string
	TraceID, SpanID, ParentID string
	// Attributes holds the span's string attributes.
	Attributes map[string]string
}

// Receiver collects the spans exported to it.
type Receiver struct {
	collectorpb.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []Span
}

// Start listens on a free loopback port and serves until the test ends.
func Start(t testing.TB) *Receiver { t.Helper(); return StartOn(t, "127.0.0.1:0") }

// StartOn is Start on addr.
func StartOn(t testing.TB, addr string) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{addr: ln.Addr().String()}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

// Endpoint is the receiver's address as OTEL_EXPORTER_OTLP_ENDPOINT takes it
// (the http scheme: plaintext gRPC).
func (r *Receiver) Endpoint() string { return "http://" + r.addr }

// Export keeps the spans of one export.
func (r *Receiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{
					Service: service, Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()),
					SpanID: hex.EncodeToString(s.GetSpanId()), Attributes: map[string]string{},
				}
				if p := s.GetParentSpanId(); len(p) > 0 {
					sp.ParentID = hex.EncodeToString(p)
				}
				for _, kv := range s.GetAttributes() {
					if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
						sp.Attributes[kv.GetKey()] = v.StringValue
					}
				}
				r.spans = append(r.spans, sp)
			}
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Trace returns the spans of one trace.
func (r *Receiver) Trace(traceID string) []Span {
	var out []Span
	for _, s := range r.Spans() {
		if s.TraceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// WaitTrace waits up to timeout for the trace to hold a span named each of
// names, and returns its spans then (what it holds at the timeout
// otherwise).
func (r *Receiver) WaitTrace(traceID string, timeout time.Duration, names ...string) []Span {
	deadline := time.Now().Add(timeout)
	for {
		spans := r.Trace(traceID)
		have := map[string]bool{}
		for _, s := range spans {
			have[s.Name] = true
		}
		all := true
		for _, n := range names {
			all = all && have[n]
		}
		if all || time.Now().After(deadline) {
			return spans
		}
		time.Sleep(20 * time.Millisecond)
	}
}
