package sdk

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"

	pb "github.com/cairn-mcp/cairn/sdk/internal/pluginv1"
)

// A handler reads the trace id of a call the host sent with a traceparent,
// whether or not the plugin exports traces itself, and none of an
// untraced call (docs/decisions.md D38).
func TestTraceIDReachesTheHandler(t *testing.T) {
	p := New("tracetest", "0.0.1", WithLogger(hclog.NewNullLogger()))
	AddTool(p, Tool[struct{}, map[string]string]{
		Name: "tracetest_id", Description: "Echoes the call's trace id.",
		Handler: func(ctx context.Context, _ struct{}) (map[string]string, error) {
			return map[string]string{"trace_id": TraceID(ctx)}, nil
		},
	})
	s := &server{p: p}
	for tp, want := range map[string]string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": "4bf92f3577b34da6a3ce929d0e0e4736",
		"": "",
	} {
		res := s.callProto(context.Background(), &pb.CallToolRequest{Tool: "tracetest_id", Arguments: []byte(`{}`), Traceparent: tp}, func(*pb.CallToolEvent) {})
		var out map[string]string
		if err := json.Unmarshal(res.Output, &out); err != nil || res.Error != nil {
			t.Fatalf("call: %v %v", err, res.Error)
		}
		if out["trace_id"] != want {
			t.Fatalf("traceparent %q: handler saw trace id %q, want %q", tp, out["trace_id"], want)
		}
	}
}
