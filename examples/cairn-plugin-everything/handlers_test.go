package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/sdktest"
)

// The fixtures that talk to the client, tested as an author tests them:
// sdk.WithClientAsker answers for the client, sdk.WithLog captures lines.
func TestFixturesTalkToTheClient(t *testing.T) {
	p := newPlugin()
	var asked []string
	client := sdk.WithClientAsker(context.Background(), func(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked = append(asked, method)
		if method == "sampling/createMessage" {
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"42"},"model":"m"}`), nil
		}
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"test_sampling", `{"prompt":"six times seven?"}`, `{"text":"LLM response: 42"}`},
		{"test_elicitation", `{"message":"who?"}`, `{"text":"User response: action=decline, content=null"}`},
		{"test_elicitation_sep1034_defaults", `{}`, `{"text":"Elicitation completed: action=decline, content=null"}`},
	} {
		res := sdktest.Invoke(client, p, tc.tool, []byte(tc.args))
		if res.Err != nil || string(res.Output) != tc.want {
			t.Errorf("%s = %s, %v; want %s", tc.tool, res.Output, res.Err, tc.want)
		}
		// Without a client that can be asked, the tool fails typed.
		if res := sdktest.Invoke(context.Background(), p, tc.tool, []byte(tc.args)); res.Err == nil || res.Err.Code != "ERR_CLIENT_UNSUPPORTED" {
			t.Errorf("%s without a client = %+v; want ERR_CLIENT_UNSUPPORTED", tc.tool, res)
		}
	}
	if len(asked) != 3 || asked[0] != "sampling/createMessage" || asked[1] != "elicitation/create" {
		t.Errorf("asked %v", asked)
	}

	var lines []string
	ctx := sdk.WithLog(context.Background(), sdk.LogInfo, func(level string, data any) {
		lines = append(lines, level+" "+data.(map[string]any)["message"].(string))
	})
	if res := sdktest.Invoke(ctx, p, "test_tool_with_logging", []byte(`{}`)); res.Err != nil {
		t.Fatal(res.Err)
	}
	if len(lines) != 3 || lines[0] != "info Tool execution started" {
		t.Errorf("log lines %v", lines)
	}
}
