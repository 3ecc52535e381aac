package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/otlptest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

// The spans one tool call leaves in each process, outermost first: the
// relay's, the host's (in the daemon), one per pipeline stage, and the
// plugin's (docs/decisions.md D38).
func callSpanNames(tool string) []string {
	names := []string{"cairn.host tools/call " + tool}
	for _, stage := range []string{"recover", "identify", "authorize", "filter", "audit", "metrics", "dispatch"} {
		names = append(names, "cairn.pipeline "+stage)
	}
	return append(names, "cairn.plugin "+tool)
}

// checkCallTrace checks that trace holds one chain of spans named names,
// each the child of the one before, the first a child of parent ("": a
// root), from the services the names imply.
func checkCallTrace(t *testing.T, rcv *otlptest.Receiver, traceID, parent string, names ...string) {
	t.Helper()
	spans := rcv.WaitTrace(traceID, 30*time.Second, names...)
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		if _, dup := byName[s.Name]; dup {
			t.Errorf("trace %s holds two spans named %q: one trace per call", traceID, s.Name)
		}
		byName[s.Name] = s
	}
	for _, name := range names {
		s, ok := byName[name]
		if !ok {
			t.Fatalf("trace %s lacks span %q; it holds %v", traceID, name, spanNames(spans))
		}
		want := "cairn-daemon"
		switch {
		case strings.HasPrefix(name, "cairn.relay"):
			want = "cairn-relay"
		case strings.HasPrefix(name, "cairn.plugin"):
			want = "cairn-plugin-core"
		}
		if s.Service != want {
			t.Errorf("span %q came from service %q, want %q", name, s.Service, want)
		}
		if s.ParentID != parent {
			t.Errorf("span %q has parent %q, want %q", name, s.ParentID, parent)
		}
		parent = s.SpanID
	}
}

func spanNames(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Service+":"+s.Name)
	}
	return out
}

// findSpan waits for a span named name whose tool attribute is tool.
func findSpan(t *testing.T, rcv *otlptest.Receiver, name, tool string) otlptest.Span {
	t.Helper()
	var found otlptest.Span
	if !poll.Within(30*time.Second, func() bool {
		for _, s := range rcv.Spans() {
			if s.Name == name && s.Attributes["mcp.tool.name"] == tool {
				found = s
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no span %q of %s; received %v", name, tool, spanNames(rcv.Spans()))
	}
	return found
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a call through the relay leaves
// one trace across the relay, the daemon and the plugin; a client's
// traceparent, in _meta or in the HTTP header, is the trace's parent; and
// a thought recorded under a traced call keeps its trace id (D38).
func TestTracesSpanEveryProcess(t *testing.T) {
	rcv := otlptest.Start(t)
	w := newWorkspace(t)
	env := []string{"CAIRN_DAEMON=on", "CAIRN_PROJECT=web", "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.Endpoint(), "OTEL_BSP_SCHEDULE_DELAY=50"}
	s := w.serve(env...)

	// A call without a trace context starts a trace at the relay.
	task := structured(t, s.call("task_create", map[string]any{"title": "traced", "project": "web"}))
	taskID, _ := task["task_id"].(string)
	if taskID == "" {
		t.Fatalf("task_create: %v", task)
	}
	relaySpan := findSpan(t, rcv, "cairn.relay tools/call", "task_create")
	checkCallTrace(t, rcv, relaySpan.TraceID, "", append([]string{"cairn.relay tools/call"}, callSpanNames("task_create")...)...)

	// A client's _meta.traceparent is honoured: its trace, its span the
	// relay's parent; the thought keeps the trace id.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req := mcp.CallToolRequest{}
	req.Params.Name = "thought_record"
	req.Params.Arguments = map[string]any{"task_id": taskID, "type": "decision", "content": "traced decision"}
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("thought_record: %v %v", err, res)
	}
	thoughtID, _ := structured(t, res)["thought_id"].(string)
	checkCallTrace(t, rcv, clientTrace, clientSpan, append([]string{"cairn.relay tools/call"}, callSpanNames("thought_record")...)...)
	list := structured(t, s.call("thought_record_list", map[string]any{"task_id": taskID}))
	thoughts, _ := list["thoughts"].([]any)
	if len(thoughts) != 1 || thoughts[0].(map[string]any)["thought_id"] != thoughtID || thoughts[0].(map[string]any)["trace_id"] != clientTrace {
		t.Fatalf("thought_record_list shows %v, want %s with trace_id %s", thoughts, thoughtID, clientTrace)
	}

	// Over HTTP (the daemon's listener) the traceparent header is honoured.
	url, _ := startHTTP(t, w, env, "", "--no-auth")
	const httpTrace, httpSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"traceparent": "00-" + httpTrace + "-" + httpSpan + "-01"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e-http", Version: "1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	hreq := mcp.CallToolRequest{}
	hreq.Params.Name = "task_get"
	hreq.Params.Arguments = map[string]any{"task_id": taskID}
	if res, err := c.CallTool(ctx, hreq); err != nil || res.IsError {
		t.Fatalf("task_get over HTTP: %v %v", err, res)
	}
	checkCallTrace(t, rcv, httpTrace, httpSpan, callSpanNames("task_get")...)

	// The export of a session over the task carries the thought's trace id.
	sess := structured(t, s.call("audit_session_start", map[string]any{"task_id": taskID, "auditor_id": "e2e-client"}))
	sessionID, _ := sess["session_id"].(string)
	if res := s.call("merkle_finalize", map[string]any{"session_id": sessionID}); res.IsError {
		t.Fatalf("merkle_finalize: %v", res)
	}
	bundlePath := filepath.Join(t.TempDir(), "bundle.json")
	if code, _, errOut := runCairn(t, w, "", env, "audit", "export", sessionID, "-o", bundlePath); code != 0 {
		t.Fatalf("cairn audit export: exit %d\n%s", code, errOut)
	}
	raw, err := os.ReadFile(bundlePath)
	if err != nil {
		t.Fatal(err)
	}
	var bundle struct {
		Records []map[string]any `json:"records"`
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		t.Fatalf("bundle: %v\n%s", err, raw)
	}
	// The thought keeps the client's trace, the task_created event the
	// trace the relay started.
	want := map[string]string{thoughtID: clientTrace, taskID + "/event/1": relaySpan.TraceID}
	for _, m := range bundle.Records {
		id, _ := m["id"].(string)
		if got, _ := m["trace_id"].(string); got != want[id] {
			t.Errorf("exported record %s has trace_id %q, want %q", id, got, want[id])
		}
		delete(want, id)
	}
	if len(want) > 0 {
		t.Fatalf("cairn audit export lacks records %v:\n%s", want, raw)
	}
}

// Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is exported, not even to the
// OTLP default address, localhost:4317, in plaintext as the other OTEL_*
// variables allow (D38).
func TestNoTracesWithoutEndpoint(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.1:4317"); err != nil {
		t.Skipf("the OTLP default port is taken here: %v", err)
	} else {
		ln.Close()
	}
	rcv := otlptest.StartOn(t, "127.0.0.1:4317")
	w := newWorkspace(t)
	s := w.serve("CAIRN_DAEMON=on", "OTEL_EXPORTER_OTLP_INSECURE=true", "OTEL_BSP_SCHEDULE_DELAY=50")
	s.call("task_list", map[string]any{})
	// An absence: spans, with a batch delay of 50 ms, would have come.
	time.Sleep(time.Second)
	if spans := rcv.Spans(); len(spans) > 0 {
		t.Fatalf("spans exported with no endpoint set: %v", spanNames(spans))
	}
}
