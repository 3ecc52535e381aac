package mcpserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Where a call's idempotency key comes from, and what is refused.
func TestIdempotencyKeyOfACall(t *testing.T) {
	h := &Server{}
	write := &registry.Tool{Name: "task_create", HonoursIdempotency: true}
	blind := &registry.Tool{Name: "computer_action"}
	read := &registry.Tool{Name: "task_get", ReadOnly: true}
	withMeta := func(v any) mcp.CallToolRequest {
		var req mcp.CallToolRequest
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{MetaIdempotencyKey: v}}
		return req
	}
	httpKey := func(k string) context.Context {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Idempotency-Key", k)
		return httpserve.WithIdempotencyKey(r).Context()
	}
	alice := seam.Caller{ID: "alice", Source: "api_key"}
	bob := seam.Caller{ID: "bob", Source: "api_key"}

	key := func(ctx context.Context, req mcp.CallToolRequest, tool *registry.Tool, caller seam.Caller) (string, string) {
		c := &pipeline.Call{Name: tool.Name, Tool: tool, Caller: caller}
		if _, e := h.idempotencyOf(ctx, req, c); e != nil {
			return "", e.Details["constraint"].(string)
		}
		return c.IdempotencyKey, ""
	}
	a, _ := key(httpKey("k1"), mcp.CallToolRequest{}, write, alice)
	b, _ := key(httpKey("k1"), mcp.CallToolRequest{}, write, bob)
	if a == "" || a == b {
		t.Errorf("the same client key of two principals: %q and %q; want two scoped keys", a, b)
	}
	if m, _ := key(context.Background(), withMeta("k1"), write, alice); m != a {
		t.Errorf("_meta key %q, header key %q: want one key for one principal's k1", m, a)
	}
	for name, tc := range map[string]struct {
		ctx  context.Context
		req  mcp.CallToolRequest
		tool *registry.Tool
		want string
	}{
		"not a string":                 {context.Background(), withMeta(7), write, "type"},
		"empty":                        {httpKey(""), withMeta(""), write, "length"},
		"too long":                     {httpKey(strings.Repeat("k", 256)), mcp.CallToolRequest{}, write, "length"},
		"control character":            {httpKey("a\x01b"), mcp.CallToolRequest{}, write, "pattern"},
		"a write that can't honour it": {httpKey("k"), mcp.CallToolRequest{}, blind, "honoured"},
	} {
		if _, refused := key(tc.ctx, tc.req, tc.tool, alice); refused != tc.want {
			t.Errorf("%s: refused for %q, want %q", name, refused, tc.want)
		}
	}
	if k, refused := key(httpKey("k"), mcp.CallToolRequest{}, read, alice); refused != "" || k == "" {
		t.Errorf("a read with a client key: %q refused %q; want it taken", k, refused)
	}
	// Without a client key every call still gets one of its own.
	x, _ := key(context.Background(), mcp.CallToolRequest{}, write, alice)
	y, _ := key(context.Background(), mcp.CallToolRequest{}, write, alice)
	if x == "" || x == y {
		t.Errorf("minted keys %q and %q; want two distinct keys", x, y)
	}
}
