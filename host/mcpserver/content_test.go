package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// TestResourceLinksCarryNoEmptyFields: a resource_link block is written
// without empty fields by the session writer and by encoding/json (the HTTP
// transport) alike, and keeps the fields it has.
func TestResourceLinksCarryNoEmptyFields(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{
		mcpContent(seam.Content{Type: "resource_link", URI: "cairn://tasks/T-1", Text: "task T-1", MIMEType: "application/json"}),
		mcpContent(seam.Content{Type: "resource_link", URI: "sdd://x", Text: "x"}),
	}}
	fast, err := jsonrpc.AppendMessage(nil, mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(1)), Result: res})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"session writer": fast, "encoding/json": slow} {
		s := string(b)
		if strings.Contains(s, `:""`) {
			t.Errorf("%s wrote an empty field: %s", name, s)
		}
		for _, want := range []string{`{"type":"resource_link","uri":"cairn://tasks/T-1","name":"task T-1","mimeType":"application/json"}`,
			`{"type":"resource_link","uri":"sdd://x","name":"x"}`} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: %s lacks %s", name, s, want)
			}
		}
	}
}
