package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Toolsets, tools and read-only mode chosen per HTTP request
// (docs/decisions.md D39): requests with different X-MCP-Toolsets,
// X-MCP-Tools and X-MCP-Readonly headers, or /mcp/x/{toolset} and
// /mcp/readonly URLs, list and may call only their tools; a choice beyond
// the listener's toolsets or the key's scopes (D22) is a 403 naming the
// header, an unknown name a 400; stdio sessions keep their environment's
// settings (D21).

// newChoiceAgent is an HTTP agent of url with key and extra headers (nil:
// none).
func newChoiceAgent(t *testing.T, url, key string, headers map[string]string) *httpAgent {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + key}
	for k, v := range headers {
		h[k] = v
	}
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(h))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "http-agent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize %v: %v", headers, err)
	}
	return &httpAgent{t: t, c: c}
}

// toolNames lists an agent's tools, sorted.
func (a *httpAgent) toolNames() []string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		a.t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, t := range res.Tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// toolsetOf is a tool's toolset by its name's prefix.
func toolsetOf(name string) string {
	if strings.HasPrefix(name, "server_") {
		return "system"
	}
	for _, ts := range []string{"sdd", "admin", "vision", "computer"} {
		if strings.HasPrefix(name, ts+"_") {
			return ts
		}
	}
	return "core"
}

// choiceRefusal posts an initialize with headers to url and returns the
// status and the JSON-RPC error's data.
func choiceRefusal(t *testing.T, url, key string, headers map[string]string) (int, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m struct {
		Error struct {
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m.Error.Data
}

func TestHTTPToolsetsPerRequest(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "CAIRN_TOOLSETS=core,sdd,admin")
	op := w.serve()
	_, full := opKey(t, op, "sam", "read", "write", "admin")
	_, reader := opKey(t, op, "rita", "read")
	op.close()

	url := serveHTTP(t, w)
	base := strings.TrimSuffix(url, "/mcp")

	t.Run("each request lists and calls only its choice", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			path    string
			headers map[string]string
			// toolsets are those listed (system always); only, when set,
			// the exact tools besides the system ones.
			toolsets []string
			only     []string
			writes   bool
			// call is allowed, refused is refused with required; cause is
			// the header (or URL) the refusal names as what to change.
			call, refused, required string
			cause                   string
		}{
			{name: "no choice: the listener's", path: "/mcp", toolsets: []string{"admin", "core", "sdd", "system"}, writes: true, call: "task_list"},
			{name: "X-MCP-Toolsets core", path: "/mcp", headers: map[string]string{"X-MCP-Toolsets": "core"},
				toolsets: []string{"core", "system"}, writes: true, call: "task_list", refused: "sdd_vitals", required: "toolset sdd", cause: "X-MCP-Toolsets"},
			{name: "X-MCP-Tools sdd_vitals", path: "/mcp", headers: map[string]string{"X-MCP-Tools": "sdd_vitals"},
				toolsets: []string{"sdd", "system"}, only: []string{"sdd_vitals"}, call: "sdd_vitals", refused: "task_list", required: "toolset core", cause: "X-MCP-Tools"},
			{name: "X-MCP-Toolsets core + X-MCP-Tools sdd_vitals", path: "/mcp", headers: map[string]string{"X-MCP-Toolsets": "core", "X-MCP-Tools": "sdd_vitals"},
				toolsets: []string{"core", "sdd", "system"}, writes: true, call: "sdd_vitals", refused: "admin_workspace_list", required: "toolset admin", cause: "X-MCP-Toolsets"},
			{name: "X-MCP-Readonly", path: "/mcp", headers: map[string]string{"X-MCP-Toolsets": "core", "X-MCP-Readonly": "true"},
				toolsets: []string{"core", "system"}, call: "task_list", refused: "task_create", required: "mode FULL", cause: "X-MCP-Readonly"},
			{name: "X-MCP-Exclude-Tools", path: "/mcp", headers: map[string]string{"X-MCP-Toolsets": "core", "X-MCP-Exclude-Tools": "task_create"},
				toolsets: []string{"core", "system"}, call: "task_list", refused: "task_create", required: "tool task_create not excluded", cause: "X-MCP-Exclude-Tools"},
			{name: "URL /mcp/x/sdd", path: "/mcp/x/sdd", toolsets: []string{"sdd", "system"}, writes: true, call: "sdd_vitals", refused: "task_list", required: "toolset core", cause: "URL"},
			{name: "URL /mcp/readonly", path: "/mcp/readonly", toolsets: []string{"admin", "core", "sdd", "system"}, call: "task_list", refused: "task_create", required: "mode FULL", cause: "URL /readonly"},
			{name: "URL beats the header", path: "/mcp/x/core/readonly", headers: map[string]string{"X-MCP-Toolsets": "sdd", "X-MCP-Readonly": "false"},
				toolsets: []string{"core", "system"}, call: "task_list", refused: "task_create", required: "mode FULL", cause: "URL /readonly"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := newChoiceAgent(t, base+tc.path, full, tc.headers)
				names := a.toolNames()
				sets := map[string]bool{}
				var besidesSystem []string
				writes := false
				for _, n := range names {
					sets[toolsetOf(n)] = true
					if toolsetOf(n) != "system" {
						besidesSystem = append(besidesSystem, n)
					}
					writes = writes || n == "task_create"
				}
				var got []string
				for ts := range sets {
					got = append(got, ts)
				}
				sort.Strings(got)
				if strings.Join(got, ",") != strings.Join(tc.toolsets, ",") {
					t.Errorf("toolsets listed %v, want %v (%v)", got, tc.toolsets, names)
				}
				if tc.only != nil && strings.Join(besidesSystem, ",") != strings.Join(tc.only, ",") {
					t.Errorf("tools listed %v, want %v and the system ones", besidesSystem, tc.only)
				}
				if sets["core"] && writes != tc.writes {
					t.Errorf("task_create listed %v, want %v", writes, tc.writes)
				}
				args := map[string]any{"project": "web"}
				if strings.HasPrefix(tc.call, "sdd_") {
					args = map[string]any{}
				}
				expect(t, "call "+tc.call, a.call(tc.call, args), "")
				if tc.refused != "" {
					got := a.call(tc.refused, map[string]any{"title": "outside", "project": "web"})
					expect(t, "call "+tc.refused, got, tc.required)
					// The refusal names the request's own cause, never the
					// server's CAIRN_MODE or CAIRN_TOOLSETS, which did not cause it.
					e, _ := got.result["error"].(map[string]any)
					d, _ := e["details"].(map[string]any)
					msg := fmt.Sprint(e["message"])
					if d["header"] != tc.cause || strings.Contains(msg, "CAIRN_") {
						t.Errorf("call %s: header %v, message %q; want header %q and no CAIRN_ setting", tc.refused, d["header"], msg, tc.cause)
					}
				}
			})
		}
	})

	t.Run("two requests of one key, different choices", func(t *testing.T) {
		core := newChoiceAgent(t, url, full, map[string]string{"X-MCP-Toolsets": "core"})
		sdd := newChoiceAgent(t, url, full, map[string]string{"X-MCP-Toolsets": "sdd"})
		if c, s := strings.Join(core.toolNames(), ","), strings.Join(sdd.toolNames(), ","); c == s || strings.Contains(c, "sdd_") || strings.Contains(s, "task_") {
			t.Errorf("core agent lists %s; sdd agent lists %s", c, s)
		}
	})

	t.Run("2026-07-28: tools/list answers for the request", func(t *testing.T) {
		body, _ := json.Marshal(modernRequest(1, "tools/list", nil, modernMeta(mcp.ProtocolVersion20260728, "stateless", "")))
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		req.Header.Set(mcp.HeaderMethod, "tools/list")
		req.Header.Set("Authorization", "Bearer "+full)
		req.Header.Set("X-MCP-Toolsets", "sdd")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m struct {
			Result struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || len(m.Result.Tools) == 0 {
			t.Fatalf("tools/list: %d %s", resp.StatusCode, raw)
		}
		for _, tool := range m.Result.Tools {
			if ts := toolsetOf(tool.Name); ts != "sdd" && ts != "system" {
				t.Errorf("X-MCP-Toolsets sdd lists %s", tool.Name)
			}
		}
	})

	t.Run("beyond what the key allows: 403; unknown: 400", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			key      string
			path     string
			headers  map[string]string
			status   int
			header   string
			required string
		}{
			{"admin toolset without the admin scope", reader, "/mcp", map[string]string{"X-MCP-Toolsets": "admin"}, 403, "X-MCP-Toolsets", "admin"},
			{"write mode without the write scope", reader, "/mcp", map[string]string{"X-MCP-Readonly": "false"}, 403, "X-MCP-Readonly", "write"},
			{"write tool without the write scope", reader, "/mcp", map[string]string{"X-MCP-Tools": "task_create"}, 403, "X-MCP-Tools", "write"},
			{"toolset the listener does not serve", full, "/mcp", map[string]string{"X-MCP-Toolsets": "core,vision"}, 403, "X-MCP-Toolsets", "toolset vision"},
			{"URL toolset the listener does not serve", full, "/mcp/x/vision", nil, 403, "URL /mcp/x/vision", "toolset vision"},
			{"unknown toolset", full, "/mcp", map[string]string{"X-MCP-Toolsets": "weather"}, 400, "X-MCP-Toolsets", ""},
			{"unknown tool", full, "/mcp", map[string]string{"X-MCP-Tools": "task_frobnicate"}, 400, "X-MCP-Tools", ""},
			{"malformed read-only", full, "/mcp", map[string]string{"X-MCP-Readonly": "perhaps"}, 400, "X-MCP-Readonly", ""},
		} {
			status, data := choiceRefusal(t, base+tc.path, tc.key, tc.headers)
			d, _ := data["details"].(map[string]any)
			if status != tc.status || d["header"] != tc.header || (tc.required != "" && d["required"] != tc.required) {
				t.Errorf("%s: %d %v, want %d naming header %q required %q", tc.name, status, data, tc.status, tc.header, tc.required)
			}
			if tc.status == 403 && (data["code"] != "ERR_FORBIDDEN" || d["allowed"] == nil) {
				t.Errorf("%s: %v, want ERR_FORBIDDEN naming what is allowed", tc.name, data)
			}
		}
		// Within the key: a read-only key asks read-only.
		ro := newChoiceAgent(t, base+"/mcp/x/core/readonly", reader, nil)
		if names := strings.Join(ro.toolNames(), ","); strings.Contains(names, "task_create") || !strings.Contains(names, "task_list") {
			t.Errorf("read key on /mcp/x/core/readonly lists %s", names)
		}
		expect(t, "read key calls task_list", ro.call("task_list", map[string]any{"project": "web"}), "")
	})
}

// On a data dir's shared daemon, HTTP requests choosing their tools and
// stdio sessions run in one server: each stdio session lists what its
// environment says (docs/decisions.md D21), whatever the requests chose.
func TestHTTPToolsetsLeaveStdioSessionsAlone(t *testing.T) {
	w := newWorkspace(t)
	env := append(append([]string{}, daemonEnv...), "CAIRN_TOOLSETS=core,sdd,admin")
	op := w.serve(env...)
	_, full := opKey(t, op, "sam", "read", "write", "admin")
	hs := startHTTPServe(t, w, env...)
	a := newChoiceAgent(t, hs.url, full, map[string]string{"X-MCP-Toolsets": "core", "X-MCP-Readonly": "true"})
	check := func(when string) {
		t.Helper()
		names := strings.Join(a.toolNames(), ",")
		if strings.Contains(names, "sdd_") || strings.Contains(names, "task_create") || !strings.Contains(names, "task_list") {
			t.Errorf("%s: the HTTP request choosing core read-only lists %s", when, names)
		}
	}
	check("before the stdio sessions")
	sddOnly := w.serve(append(env, "CAIRN_TOOLSETS=sdd")...)
	for name := range sddOnly.tools() {
		if ts := toolsetOf(name); ts != "sdd" && ts != "system" {
			t.Errorf("stdio session with CAIRN_TOOLSETS=sdd lists %s", name)
		}
	}
	tools := op.tools()
	for _, name := range []string{"task_create", "sdd_vitals", "admin_workspace_list"} {
		if _, ok := tools[name]; !ok {
			t.Errorf("stdio session with CAIRN_TOOLSETS=core,sdd,admin does not list %s", name)
		}
	}
	expect(t, "stdio session with CAIRN_TOOLSETS=sdd calls sdd_vitals", stdioOutcome(t, sddOnly.call("sdd_vitals", map[string]any{})), "")
	expect(t, "stdio session with CAIRN_TOOLSETS=sdd calls task_list", stdioOutcome(t, sddOnly.call("task_list", map[string]any{"project": "web"})), "toolset core")
	check("beside the stdio sessions")
}

// stdioOutcome reads a stdio call's result as an outcome.
func stdioOutcome(t *testing.T, res *mcp.CallToolResult) outcome {
	t.Helper()
	body := structured(t, res)
	if !res.IsError {
		return outcome{ok: true, result: body}
	}
	e, _ := body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return outcome{code: fmt.Sprint(e["code"]), required: fmt.Sprint(d["required"]), result: body}
}
