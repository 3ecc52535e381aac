package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// pageOutput is a task_list page of n rows as the core plugin encodes it.
func pageOutput(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"tasks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"task_id":"T-%d","title":"Task %d: \"quoted\" <b>bold</b> & more","project":"proj-3","status":"todo","priority":"high","progress":0.25,"assignee":"agent-%d","labels":["cache","perf"],"created_at":"2026-11-23T07:50:37Z","updated_at":"2026-11-23T07:50:37Z","description":"line one\nline two — ünïcödé \u2028 tab\tend"}`, i, i, i%7)
	}
	fmt.Fprintf(&b, `],"total_count":%d,"returned_count":%d,"offset":0,"limit":50}`, 10*n, n)
	return []byte(b.String())
}

// toolResult is a tool result of the shape the host's toResult gives
// (host/mcpserver/tool_calls.go): the status in _meta, the output as structuredContent and
// as the first text block, then any further content.
func toolResult(status int, raw string, isError bool, more ...mcp.Content) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: isError, RawStructuredContent: json.RawMessage(raw)}
	res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"status": status}}
	res.Content = append([]mcp.Content{mcp.NewTextContent(raw)}, more...)
	return res
}

func callResponse(id any, res *mcp.CallToolResult) mcp.JSONRPCResponse {
	return mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Result: res}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	// Numbers as written: a value out of float64's range is still JSON.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// TestAppendMessageAgreesWithEncodingJSON: every message written directly
// decodes to what encoding/json writes for it, on one line.
func TestAppendMessageAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	withMeta := toolResult(200, `{"a":1}`, false)
	withMeta.ResultType = mcp.ResultTypeComplete
	withMeta.Meta.AdditionalFields["io.modelcontextprotocol/serverInfo"] = map[string]any{"name": "cairn", "version": "1"}
	annotated := mcp.NewTextContent("note")
	annotated.Annotations = &mcp.Annotations{Priority: ptr(0.5)}
	for _, c := range []struct {
		name string
		msg  any
	}{
		{"task_get", callResponse(int64(7), toolResult(200, `{"task_id":"T-1","title":"a"}`, false))},
		{"string id", callResponse("req-\"1\"", toolResult(201, `{"ok":true}`, false))},
		{"50-row page", callResponse(int64(3), toolResult(200, string(pageOutput(50)), false))},
		{"not an object", callResponse(int64(4), toolResult(200, `{"result":[1,2]}`, false))},
		{"typed error", callResponse(int64(5), toolResult(400, `{"error":{"code":"ERR_INVALID_INPUT","message":"title is empty \u003cx\u003e \u0026 \"y\"","details":{"field":"title"}}}`, true))},
		{"extra content", callResponse(int64(6), toolResult(200, `{}`, false,
			mcp.NewImageContent("AQID", "image/png"), mcp.NewTextContent("after\n"), mcp.NewResourceLink("sdd://x", "x", "", "")))},
		{"2026-07-28 meta and resultType", callResponse(int64(8), withMeta)},
		{"annotated text", callResponse(int64(9), &mcp.CallToolResult{Content: []mcp.Content{annotated}})},
		{"no content, no meta", callResponse(int64(10), &mcp.CallToolResult{})},
		{"text escapes", callResponse(int64(11), &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("\x00\x1f\"\\\u2028\u2029\xff\xfe\t\r\n<>&é😀")}})},
		{"unstructured struct content", callResponse(int64(12), &mcp.CallToolResult{StructuredContent: map[string]any{"k": "v"}})},
		{"float id", callResponse(1.5, toolResult(200, `{}`, false))},
		{"decoded integer id", callResponse(float64(42), toolResult(200, `{}`, false))},
		{"large id", callResponse(float64(1<<60), toolResult(200, `{}`, false))},
		{"notification", mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "notifications/progress"}}},
		{"other result", mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1)), Result: mcp.EmptyResult{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := json.Marshal(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := AppendMessage([]byte("kept:"), c.msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, []byte("kept:")) {
				t.Fatalf("dst's bytes were lost: %q", got)
			}
			got = got[len("kept:"):]
			if bytes.ContainsAny(got, "\r\n") {
				t.Fatalf("the line holds a line break: %q", got)
			}
			if g, w := decodeAny(t, got), decodeAny(t, want); !reflect.DeepEqual(g, w) {
				t.Fatalf("decodes differently\n got %s\nwant %s", got, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestAppendToolResponseDirect: the results cairn's tools produce take the
// direct path (the others fall back, checked above by value).
func TestAppendToolResponseDirect(t *testing.T) {
	t.Parallel()
	for name, res := range map[string]*mcp.CallToolResult{
		"page":    toolResult(200, string(pageOutput(50)), false),
		"error":   toolResult(404, `{"error":{"code":"ERR_NOT_FOUND","message":"no task T-9","details":{}}}`, true),
		"content": toolResult(200, `{}`, false, mcp.NewImageContent("AQ==", "image/png")),
	} {
		for _, id := range []any{float64(7), int64(7), "seven", 1.5, float64(1 << 60)} {
			if _, ok := appendToolResponse(nil, callResponse(id, res), res); !ok {
				t.Errorf("%s, id %v: not written directly", name, id)
			}
		}
	}
}

// TestAppendToolResponseRefusesBrokenStructuredContent: bytes that are not
// one JSON value on one line never reach the line as they are.
func TestAppendToolResponseRefusesBrokenStructuredContent(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`{"a":`, `{"a":1} {"b":2}`, "{\n\"a\":1}", `{"a":"\xff"}`, `{"a":"\ud800"}`, `nul`, " ", "\t"} {
		res := &mcp.CallToolResult{RawStructuredContent: json.RawMessage(raw), Content: []mcp.Content{mcp.NewTextContent(raw)}}
		if out, ok := appendToolResponse([]byte("x"), callResponse(int64(1), res), res); ok || string(out) != "x" {
			t.Errorf("%q: written directly (%v) or dst changed: %q", raw, ok, out)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\", "\x00\x7f\u2028", "\xff\xc3(", "é😀<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		want, _ := json.Marshal(s)
		var g, w string
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q: %v (%s)", s, err, got)
		}
		_ = json.Unmarshal(want, &w)
		if g != w {
			t.Fatalf("%q decodes to %q, encoding/json's to %q", s, g, w)
		}
		if bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("%q: line break in %q", s, got)
		}
	})
}

// FuzzAppendToolResponse: whatever a plugin sends as output, the line is
// either written directly and means what encoding/json would have written,
// or left to encoding/json.
func FuzzAppendToolResponse(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `{"a": 1}`, "{\"a\":\n1}", `[]`, `"x"`, `{"a":"\u00e9\ud83d\ude00"}`, `{`, `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res := &mcp.CallToolResult{RawStructuredContent: raw, Content: []mcp.Content{mcp.NewTextContent(string(raw))}}
		res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"status": 200}}
		msg := callResponse(int64(1), res)
		got, ok := appendToolResponse(nil, msg, res)
		if !ok {
			return
		}
		want, err := json.Marshal(msg)
		if err != nil {
			t.Fatalf("written directly, but encoding/json refuses it: %v", err)
		}
		if bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("line break in %q", got)
		}
		if g, w := decodeAny(t, got), decodeAny(t, want); !reflect.DeepEqual(g, w) {
			t.Fatalf("decodes differently\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkEncodePage(b *testing.B) {
	res := toolResult(200, string(pageOutput(50)), false)
	msg := callResponse(int64(42), res)
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; i < b.N; i++ {
			var err error
			if buf, err = AppendMessage(buf[:0], msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
