package e2e

import (
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// resources/subscribe to a URI that does not exist and a refused
// prompts/get answer the same typed JSON-RPC errors on stdio (own host and
// relay) and HTTP.
func TestProtocolErrorsAcrossTransports(t *testing.T) {
	for _, tr := range []string{"no daemon", "relay", "http"} {
		t.Run(tr, func(t *testing.T) {
			w := everythingWorkspace(t)
			url := ""
			if tr == "http" {
				url, _ = startHTTP(t, w, nil, "cairn.plugin.everything: plugin ready", "--no-auth")
			}
			ec := askingClient(t, w, url, tr, false, nil)
			for _, tc := range []struct {
				uri  string
				want error // nil: the subscription stands
			}{
				{"test://static-text", nil},
				{"test://template/42/data", nil},
				{"cairn://tasks/T-1", nil}, // task_create below makes it
				{"test://no-such-thing", mcp.ErrResourceNotFound},
				{"cairn://tasks/T-999", mcp.ErrResourceNotFound},
				{"nowhere://at/all", mcp.ErrResourceNotFound},
			} {
				if tc.uri == "cairn://tasks/T-1" {
					ec.call("task_create", map[string]any{"title": "subscribed to"})
				}
				//lint:ignore SA1019 resources/subscribe is the 2025-11-25 era's, under test
				err := ec.c.Subscribe(t.Context(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: tc.uri}})
				switch {
				case tc.want == nil && err != nil:
					t.Errorf("subscribe %s: %v; want it to stand", tc.uri, err)
				case tc.want != nil && !errors.Is(err, tc.want):
					t.Errorf("subscribe %s: %v; want %v", tc.uri, err, tc.want)
				}
			}
			for _, tc := range []struct {
				name string
				args map[string]string
				want error
			}{
				{"test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"}, nil},
				{"test_prompt_with_arguments", map[string]string{"arg1": "a"}, mcp.ErrInvalidParams},
				{"no_such_prompt", nil, mcp.ErrInvalidParams},
			} {
				req := mcp.GetPromptRequest{}
				req.Params.Name, req.Params.Arguments = tc.name, tc.args
				_, err := ec.c.GetPrompt(t.Context(), req)
				switch {
				case tc.want == nil && err != nil:
					t.Errorf("prompts/get %s %v: %v", tc.name, tc.args, err)
				case tc.want != nil && !errors.Is(err, tc.want):
					t.Errorf("prompts/get %s %v: %v; want %v", tc.name, tc.args, err, tc.want)
				}
			}
		})
	}
}
