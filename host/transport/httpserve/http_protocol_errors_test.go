package httpserve

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A prompts/get error mcp-go reports as internal becomes invalid params
// when the plugin refused the arguments or the name; anything else passes
// unchanged, and a stream is not held back.
func TestPromptErrorsOverHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, contentType, body, want string
	}{
		{"refused argument", "application/json",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"ERR_INVALID_INPUT: prompt p needs argument a"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"ERR_INVALID_INPUT: prompt p needs argument a"}}` + "\n"},
		{"unknown prompt", "application/json",
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"ERR_NOT_FOUND: no prompt named \"p\""}}`,
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"ERR_NOT_FOUND: no prompt named \"p\""}}` + "\n"},
		{"a plugin's own failure stays internal", "application/json",
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"ERR_INTERNAL: boom"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"ERR_INTERNAL: boom"}}`},
		{"a result is untouched", "application/json",
			`{"jsonrpc":"2.0","id":1,"result":{"messages":[]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"messages":[]}}`},
		{"a stream passes through", "text/event-stream",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"ERR_INVALID_INPUT: x\"}}\n\n",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"ERR_INVALID_INPUT: x\"}}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			b := &bufferedJSON{ResponseWriter: rec}
			b.Header().Set("Content-Type", tc.contentType)
			b.WriteHeader(http.StatusOK)
			_, _ = b.Write([]byte(tc.body))
			b.finish("prompts/get")
			if got := rec.Body.String(); got != tc.want {
				t.Fatalf("body %s\nwant %s", got, tc.want)
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
		})
	}
}
