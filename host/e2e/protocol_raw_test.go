package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// modernMeta is the _meta a 2026-07-28 request carries instead of an
// initialize handshake; logLevel may be empty.
func modernMeta(version, client, logLevel string) map[string]any {
	m := map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         map[string]any{"name": client, "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	if logLevel != "" {
		m[mcp.MetaKeyLogLevel] = logLevel
	}
	return m
}

func modernRequest(id int, method string, params map[string]any, meta map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = meta
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

// until collects the messages up to and including the response with id.
func (r *rawRelay) until(id float64, what string) []map[string]any {
	r.t.Helper()
	var seen []map[string]any
	r.next(60*time.Second, what, func(m map[string]any) bool {
		seen = append(seen, m)
		return idIs(id)(m)
	})
	return seen
}

func methods(msgs []map[string]any) []string {
	var out []string
	for _, m := range msgs {
		if s, ok := m["method"].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// TestProtocolModernRawStdio checks, line by line, what the 2026-07-28
// revision asks of a stdio server, without a handshake: an unknown revision
// refused, identity and log level from each request's _meta, and
// notifications only through subscriptions/listen, tagged with its id.
func TestProtocolModernRawStdio(t *testing.T) {
	for name, env := range map[string][]string{"no daemon": nil, "relay": sharedEnv} {
		t.Run(name, func(t *testing.T) {
			w := eraWorkspace(t)
			r := startRaw(t, w, append([]string{"CAIRN_PROJECT=raw-era"}, env...)...)
			meta := modernMeta(mcp.ProtocolVersion20260728, "raw-modern", "")

			r.send(modernRequest(1, "tools/list", nil, modernMeta("2099-01-01", "raw-modern", "")))
			if e, _ := r.next(60*time.Second, "unknown revision", idIs(1))["error"].(map[string]any); e == nil || e["code"] != float64(mcp.UNSUPPORTED_PROTOCOL_VERSION) {
				t.Errorf("an unknown revision got %v; want error %d", e, mcp.UNSUPPORTED_PROTOCOL_VERSION)
			}
			r.send(modernRequest(2, "server/discover", nil, meta))
			res, _ := r.next(30*time.Second, "server/discover", idIs(2))["result"].(map[string]any)
			versions, _ := res["supportedVersions"].([]any)
			if !slices.Contains(versions, any(mcp.ProtocolVersion20260728)) || !slices.Contains(versions, any("2025-11-25")) {
				t.Errorf("server/discover supportedVersions = %v; want both eras", versions)
			}

			// Identity (D4) from the request's clientInfo; no log level, no
			// log lines.
			r.send(modernRequest(3, "tools/call", map[string]any{"name": "task_create", "arguments": map[string]any{"title": "raw", "project": "raw-era"}}, meta))
			msgs := r.until(3, "task_create")
			resp := msgs[len(msgs)-1]
			sc, _ := resp["result"].(map[string]any)["structuredContent"].(map[string]any)
			if sc["created_by"] != "raw-modern" {
				t.Errorf("created_by = %v; want the client named in _meta", sc["created_by"])
			}
			if slices.Contains(methods(msgs), string(mcp.MethodNotificationMessage)) {
				t.Errorf("log lines sent to a request that asked for none: %v", msgs)
			}
			// With a log level, the request hears of itself.
			r.send(modernRequest(4, "tools/call", map[string]any{"name": "task_get", "arguments": map[string]any{"task_id": "T-1"}}, modernMeta(mcp.ProtocolVersion20260728, "raw-modern", "info")))
			msgs = r.until(4, "task_get")
			logged := false
			for _, m := range msgs {
				if m["method"] == string(mcp.MethodNotificationMessage) {
					p, _ := m["params"].(map[string]any)
					data, _ := p["data"].(string)
					if p["level"] == "debug" {
						t.Errorf("a debug line reached a request that asked for info: %v", p)
					}
					logged = logged || strings.Contains(data, "task_get answered 200")
				}
			}
			if !logged {
				t.Errorf("no info line about task_get for a request with logLevel info: %v", msgs)
			}

			// Without a subscription, a list change is not sent.
			// The list is asked until the registry has noticed the file,
			// however long a loaded machine takes (docs/decisions.md D42).
			w.writeFile(".agents/skills/cairn-quiet/SKILL.md", skillFile, 0o644)
			id := 5
			if !poll.Within(patience, func() bool {
				r.send(modernRequest(id, "prompts/list", nil, meta))
				msgs = r.until(float64(id), "prompts/list")
				id = max(id+1, 500)
				if slices.Contains(methods(msgs), mcp.MethodNotificationPromptsListChanged) {
					t.Errorf("prompts/list_changed sent without subscriptions/listen: %v", methods(msgs))
				}
				return strings.Contains(mustJSON(msgs[len(msgs)-1]), "cairn-quiet")
			}) {
				t.Fatalf("the new skill is not listed as a prompt after %s", patience)
			}

			// A prompt refused for its arguments is invalid params.
			for i, args := range []map[string]any{{"name": "sdd-plan-phase"}, {"name": "cairn-debug", "arguments": map[string]any{"task_id": "T-99"}}, {"name": "no-such-prompt"}} {
				id := 50 + i
				r.send(modernRequest(id, "prompts/get", args, meta))
				if e, _ := r.next(30*time.Second, "prompts/get refused", idIs(float64(id)))["error"].(map[string]any); e == nil || e["code"] != float64(mcp.INVALID_PARAMS) {
					t.Errorf("prompts/get %v: %v; want error %d", args, e, mcp.INVALID_PARAMS)
				}
			}

			// With one, list changes and resource updates arrive on it,
			// tagged with the listen request's id.
			r.send(modernRequest(6, "subscriptions/listen", map[string]any{"notifications": map[string]any{
				"promptsListChanged": true, "resourceSubscriptions": []string{"cairn://tasks/T-1"}}}, meta))
			r.next(30*time.Second, "subscriptions acknowledged", func(m map[string]any) bool {
				return m["method"] == mcp.MethodNotificationSubscriptionsAcknowledged
			})
			tagged := func(method string) func(map[string]any) bool {
				return func(m map[string]any) bool {
					if m["method"] != method {
						return false
					}
					p, _ := m["params"].(map[string]any)
					pm, _ := p["_meta"].(map[string]any)
					if pm[mcp.MetaKeySubscriptionID] != float64(6) {
						t.Errorf("%s not tagged with the listen id 6: %v", method, p)
					}
					return true
				}
			}
			w.writeFile(".agents/skills/cairn-loud/SKILL.md", skillFile, 0o644)
			r.next(30*time.Second, "prompts/list_changed on the listen stream", tagged(mcp.MethodNotificationPromptsListChanged))
			r.send(modernRequest(7, "tools/call", map[string]any{"name": "task_update", "arguments": map[string]any{"task_id": "T-1", "progress": 50}}, meta))
			r.next(30*time.Second, "resources/updated on the listen stream", tagged(mcp.MethodNotificationResourceUpdated))

			// Cancelling the listen request ends its stream with a result.
			r.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 6, "_meta": meta}})
			r.next(30*time.Second, "the listen request's result", idIs(6))
		})
	}
}

// TestProtocolModernHTTPHeaders checks the headers 2026-07-28 requires of a
// Streamable HTTP request: the protocol version in a header matching _meta.
func TestProtocolModernHTTPHeaders(t *testing.T) {
	w := eraWorkspace(t)
	url := serveHTTPNoAuth(t, w)
	post := func(header map[string]string, version string) (int, map[string]any) {
		body, _ := json.Marshal(modernRequest(1, "tools/list", nil, modernMeta(version, "raw-http", "")))
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if m == nil {
			// An SSE answer: its data line.
			for _, line := range strings.Split(string(raw), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					_ = json.Unmarshal([]byte(d), &m)
				}
			}
		}
		return resp.StatusCode, m
	}
	v := mcp.ProtocolVersion20260728
	std := map[string]string{mcp.HeaderProtocolVersion: v, mcp.HeaderMethod: "tools/list"}
	if code, m := post(std, v); code != http.StatusOK || m["result"] == nil {
		t.Fatalf("tools/list with the required headers: %d %v", code, m)
	}
	for name, tc := range map[string]struct {
		header  map[string]string
		version string
	}{
		"no version header":         {map[string]string{mcp.HeaderMethod: "tools/list"}, v},
		"version header mismatched": {map[string]string{mcp.HeaderProtocolVersion: "2025-11-25", mcp.HeaderMethod: "tools/list"}, v},
		"no method header":          {map[string]string{mcp.HeaderProtocolVersion: v}, v},
		"method header mismatched":  {map[string]string{mcp.HeaderProtocolVersion: v, mcp.HeaderMethod: "tools/call"}, v},
	} {
		code, m := post(tc.header, tc.version)
		e, _ := m["error"].(map[string]any)
		if code != http.StatusBadRequest || e == nil || e["code"] != float64(mcp.HEADER_MISMATCH) {
			t.Errorf("%s: %d %v; want 400 with error %d", name, code, m, mcp.HEADER_MISMATCH)
		}
	}
}
