package daemon

import (
	"bytes"
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// traceCallLocked starts the relay's span for a tools/call ("cairn.relay
// tools/call"), under the trace context the client put in the request's
// _meta, and returns the request with the span's own context in its place,
// which the daemon honours as it would a client's (docs/decisions.md D38).
// _meta rather than a side channel: the line stays a plain MCP request,
// so a replay on a fresh daemon carries the same parent, and the daemon
// needs no second way in. The span ends when the call is answered
// (endSpanLocked). A line that does not decode as a JSON-RPC object is sent
// as it is, untraced. Only called when the relay exports traces; r.mu held.
func (r *relay) traceCallLocked(probe clientLine, line []byte) []byte {
	key, valid := rpcid.Key(probe.ID)
	if !valid {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	var params map[string]json.RawMessage
	if p := msg["params"]; len(p) > 0 && json.Unmarshal(p, &params) != nil {
		return line
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	var meta map[string]json.RawMessage
	if m := params["_meta"]; len(m) > 0 && json.Unmarshal(m, &meta) != nil {
		return line
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	var tool, tp, ts string
	_ = json.Unmarshal(params["name"], &tool)
	_ = json.Unmarshal(meta["traceparent"], &tp)
	_ = json.Unmarshal(meta["tracestate"], &ts)
	ctx, span := telemetry.Start(telemetry.WithRemote(context.Background(), tp, ts), "cairn.relay tools/call",
		trace.SpanKindClient, attribute.String("mcp.method.name", "tools/call"), attribute.String("mcp.tool.name", tool))
	tp, ts = telemetry.Parent(ctx)
	meta["traceparent"], _ = json.Marshal(tp)
	delete(meta, "tracestate")
	if ts != "" {
		meta["tracestate"], _ = json.Marshal(ts)
	}
	out, err := rewrite(msg, params, meta)
	if err != nil {
		span.End()
		return line
	}
	if r.spans == nil {
		r.spans = map[string]trace.Span{}
	}
	if old, dup := r.spans[key]; dup {
		old.End()
	}
	r.spans[key] = span
	return out
}

// rewrite encodes msg with params and params' _meta replaced, as one line.
// HTML characters stay as the client wrote them.
func rewrite(msg, params, meta map[string]json.RawMessage) ([]byte, error) {
	var err error
	if params["_meta"], err = marshalLine(meta); err != nil {
		return nil, err
	}
	if msg["params"], err = marshalLine(params); err != nil {
		return nil, err
	}
	out, err := marshalLine(msg)
	return append(out, '\n'), err
}

func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// endSpanLocked ends the span of the request key names, once it is
// answered; r.mu held.
func (r *relay) endSpanLocked(key string) {
	if span, ok := r.spans[key]; ok {
		span.End()
		delete(r.spans, key)
	}
}
