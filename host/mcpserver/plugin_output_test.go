package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// pageOutput is a task_list page of n rows as the core plugin encodes it.
func pageOutput(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"tasks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"task_id":"T-%d","title":"Task %d: \"quoted\" <b>bold</b> & more","status":"todo","description":"line one\nline two — ünïcödé \u2028 tab\tend"}`, i, i)
	}
	fmt.Fprintf(&b, `],"total_count":%d,"returned_count":%d,"offset":0,"limit":50}`, 10*n, n)
	return []byte(b.String())
}

func TestCheckOutput(t *testing.T) {
	page := pageOutput(50)
	for _, c := range []struct {
		name, out, want string
		field           string // of the typed error; want is then unused
		constraint      string
	}{
		{name: "object", out: `{"task_id":"T-1"}`, want: `{"task_id":"T-1"}`},
		{name: "spaces kept", out: `{"a": [1, 2]}`, want: `{"a": [1, 2]}`},
		{name: "lines compacted", out: "{\n  \"a\": [\r\n 1,\n 2]\n}", want: `{"a":[1,2]}`},
		{name: "array", out: `[1]`, want: `[1]`},
		{name: "50-row page", out: string(page), want: string(page)},
		{name: "truncated", out: `{"tasks":[{"task_id":"T-1"`, field: "output.tasks[0].task_id", constraint: "json"},
		{name: "two values", out: `{} {}`, field: "output", constraint: "json"},
		{name: "invalid UTF-8", out: "{\"title\":\"\xff\"}", field: "output.title", constraint: "utf8"},
		{name: "lone surrogate", out: `{"title":"\ud800"}`, field: "output.title", constraint: "utf8"},
		{name: "not JSON", out: `<html>`, field: "output", constraint: "json"},
		{name: "blank", out: " \n\t", field: "output", constraint: "json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, e := checkOutput("task_get", []byte(c.out))
			if c.constraint == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				if string(got) != c.want {
					t.Fatalf("got %q, want %q", got, c.want)
				}
				return
			}
			if e == nil {
				t.Fatalf("accepted %q", got)
			}
			if e.Code != errs.ToolOutputMalformed || e.Status != 502 || e.Details["constraint"] != c.constraint || e.Details["field"] != c.field {
				t.Fatalf("got %d %s %v: %s", e.Status, e.Code, e.Details, e.Message)
			}
		})
	}
}

// TestInvalidPluginOutputIsATypedErrorOnTheLine: what the caller of a
// plugin that answered with broken JSON reads is a well-formed answer
// carrying ERR_TOOL_OUTPUT_MALFORMED, never a broken line or none.
func TestInvalidPluginOutputIsATypedErrorOnTheLine(t *testing.T) {
	_, e := checkOutput("task_get", []byte(`{"task_id":"T-1",`))
	res := toResult(pipeline.Fail(e))
	line, err := jsonrpc.AppendMessage(nil, mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(float64(3)), Result: res})
	if err != nil || bytes.ContainsAny(line, "\r\n") {
		t.Fatalf("%v: %q", err, line)
	}
	var msg struct {
		ID     int `json:"id"`
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"structuredContent"`
			Content []mcp.TextContent `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if msg.ID != 3 || !msg.Result.IsError || msg.Result.StructuredContent.Error.Code != errs.ToolOutputMalformed ||
		len(msg.Result.Content) != 1 || !json.Valid([]byte(msg.Result.Content[0].Text)) {
		t.Fatalf("answer: %s", line)
	}
}
