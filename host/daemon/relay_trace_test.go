package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// A traced relay puts its own span's context in a tools/call's _meta, in
// the client's trace, and leaves the rest of the request as the client
// wrote it; the span ends when the call is answered (D38).
func TestRelayTracesToolCalls(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	stop, err := telemetry.Setup(context.Background(), "cairn-relay")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		_ = stop(ctx)
	})
	const client = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":"<b>&"},"_meta":{"progressToken":3,"traceparent":"` + client + `"}}}` + "\n")
	r := &relay{}
	out := r.traceCallLocked(probeClientLine(line), line)
	if !strings.HasSuffix(string(out), "\n") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("rewritten request is not one line: %q", out)
	}
	var msg struct {
		ID     int `json:"id"`
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
			Meta      map[string]any  `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(out, &msg); err != nil {
		t.Fatal(err)
	}
	tp, _ := msg.Params.Meta["traceparent"].(string)
	if msg.ID != 7 || string(msg.Params.Arguments) != `{"a":"<b>&"}` || msg.Params.Meta["progressToken"] != 3.0 {
		t.Fatalf("the request changed beyond its traceparent: %s", out)
	}
	if !strings.HasPrefix(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-") || tp == client {
		t.Fatalf("traceparent %q: want the client's trace under a span of the relay's", tp)
	}
	if len(r.spans) != 1 {
		t.Fatalf("%d spans open, want the call's", len(r.spans))
	}
	r.endSpanLocked("n7")
	if len(r.spans) != 0 {
		t.Fatal("the call's span outlived its answer")
	}
	// A request that is not a JSON-RPC object with an id goes as it is.
	for _, l := range []string{`{"jsonrpc":"2.0","method":"tools/call","params":{}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`} {
		if got := r.traceCallLocked(probeClientLine([]byte(l)), []byte(l)); string(got) != l {
			t.Fatalf("%s rewritten to %s", l, got)
		}
	}
}
