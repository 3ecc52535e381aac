package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/host/internal/skillsext"
)

// The host declares the skills extension at initialize and answers its two
// methods itself; what no plugin serves is refused with invalid params
// naming the field (docs/decisions.md D14).
func TestSkillsExtensionMethods(t *testing.T) {
	h := newMinimalServer(t)
	ctx := context.Background()
	asJSON := func(v any) map[string]any {
		t.Helper()
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	init := asJSON(h.mcp.HandleMessage(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)))
	caps, _ := init["result"].(map[string]any)["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if _, ok := ext[skillsext.ExtensionKey].(map[string]any); !ok || caps["resources"] == nil {
		t.Fatalf("initialize capabilities %v: want the skills extension beside resources", caps)
	}

	if _, ok := h.answerSkills(ctx, "prompts/list", []byte(`{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`)); ok {
		t.Error("answerSkills took prompts/list")
	}
	resp, ok := h.answerSkills(ctx, skillsext.MethodList, []byte(`{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}`))
	if !ok {
		t.Fatal("skills/list not answered")
	}
	res, _ := asJSON(resp)["result"].(map[string]any)
	if skills, ok := res["skills"].([]any); !ok || len(skills) != 0 || res["resultType"] != "complete" || res["ttlMs"] != float64(skillsTTLMs) || res["cacheScope"] != "private" {
		t.Errorf("skills/list with no plugin: %v", res)
	}
	for body, field := range map[string]string{
		`{"jsonrpc":"2.0","id":4,"method":"skills/get","params":{}}`:                                    "uri",
		`{"jsonrpc":"2.0","id":5,"method":"skills/get","params":{"uri":"skill://cairn-none/SKILL.md"}}`: "uri",
		`{"jsonrpc":"2.0","id":6,"method":"skills/list","params":{"cursor":"x"}}`:                       "cursor",
	} {
		var probe struct{ Method string }
		_ = json.Unmarshal([]byte(body), &probe)
		resp, ok := h.answerSkills(ctx, probe.Method, []byte(body))
		e, _ := asJSON(resp)["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		if !ok || e["code"] != float64(mcp.INVALID_PARAMS) || data["field"] != field {
			t.Errorf("%s: %v; want invalid params naming %s", body, e, field)
		}
	}
}
