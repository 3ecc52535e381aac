package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
)

// The test handler's catalog: the built-in toolsets and a tool of each
// class (docs/decisions.md D22).
var testTools = map[string]ToolFacts{
	"task_list":       {Toolset: "core", Scope: "read", ReadOnly: true},
	"task_create":     {Toolset: "core", Scope: "write"},
	"sdd_spec_get":    {Toolset: "sdd", Scope: "read", ReadOnly: true},
	"vision_describe": {Toolset: "vision", Scope: "read", ReadOnly: true},
	"admin_key_list":  {Toolset: "admin", Scope: "admin", ReadOnly: true},
	"health":          {Toolset: "system"},
}

func (h testHandler) DefaultSessionSettings() *clientsession.Settings {
	ts, _ := config.ParseToolsets("core,sdd,admin")
	return &clientsession.Settings{Toolsets: ts, Mode: config.ModeFull}
}

func (h testHandler) Toolsets() []string {
	return []string{"admin", "computer", "core", "sdd", "vision"}
}

func (h testHandler) ToolFacts(name string) (ToolFacts, bool) {
	f, ok := testTools[name]
	return f, ok
}

func TestChooseTools(t *testing.T) {
	t.Parallel()
	s := New(testHandler{}, clientsession.Limits{}, nil)
	readOnlyListener := testHandler{}.DefaultSessionSettings()
	readOnlyListener.Mode = config.ModeReadOnly
	for _, tc := range []struct {
		name     string
		method   string
		listener *clientsession.Settings
		keyed    bool
		scopes   []string
		headers  map[string]string
		path     string
		status   int
		header   string
		required string
		// visible and hidden are tools the chosen settings list or not.
		visible, hidden []string
	}{
		{name: "no choice keeps the listener's", path: "/mcp", visible: []string{"task_create", "sdd_spec_get", "admin_key_list"}},
		{name: "toolsets", headers: map[string]string{HeaderToolsets: "core"}, path: "/mcp",
			visible: []string{"task_list", "task_create", "health"}, hidden: []string{"sdd_spec_get", "admin_key_list"}},
		{name: "tools alone", headers: map[string]string{HeaderTools: "sdd_spec_get"}, path: "/mcp",
			visible: []string{"sdd_spec_get", "health"}, hidden: []string{"task_list"}},
		{name: "toolsets and tools", headers: map[string]string{HeaderToolsets: "core", HeaderTools: "sdd_spec_get"}, path: "/mcp",
			visible: []string{"task_list", "sdd_spec_get"}, hidden: []string{"admin_key_list"}},
		{name: "read-only header", headers: map[string]string{HeaderReadonly: "true"}, path: "/mcp",
			visible: []string{"task_list", "sdd_spec_get"}, hidden: []string{"task_create"}},
		{name: "URL toolset read-only", path: "/mcp/x/core/readonly", visible: []string{"task_list"}, hidden: []string{"task_create", "sdd_spec_get"}},
		{name: "all is the ceiling", keyed: true, scopes: []string{"read", "write"}, headers: map[string]string{HeaderToolsets: "all"}, path: "/mcp",
			visible: []string{"task_create", "sdd_spec_get"}, hidden: []string{"vision_describe"}},
		{name: "toolset beyond the listener", headers: map[string]string{HeaderToolsets: "core,vision"}, path: "/mcp",
			status: 403, header: HeaderToolsets, required: "toolset vision"},
		{name: "URL toolset beyond the listener", path: "/mcp/x/vision", status: 403, header: "URL /mcp/x/vision", required: "toolset vision"},
		{name: "admin without the admin scope", keyed: true, scopes: []string{"read", "write"}, headers: map[string]string{HeaderToolsets: "admin"}, path: "/mcp",
			status: 403, header: HeaderToolsets, required: "admin"},
		{name: "admin with the admin scope", keyed: true, scopes: []string{"admin"}, headers: map[string]string{HeaderToolsets: "admin"}, path: "/mcp",
			visible: []string{"admin_key_list"}, hidden: []string{"task_list"}},
		{name: "unknown toolset", headers: map[string]string{HeaderToolsets: "weather"}, path: "/mcp", status: 400, header: HeaderToolsets},
		{name: "unknown tool", headers: map[string]string{HeaderTools: "no_such_tool"}, path: "/mcp", status: 400, header: HeaderTools},
		{name: "write tool without write scope", keyed: true, scopes: []string{"read"}, headers: map[string]string{HeaderTools: "task_create"}, path: "/mcp",
			status: 403, header: HeaderTools, required: "write"},
		{name: "tool beyond the listener", headers: map[string]string{HeaderTools: "vision_describe"}, path: "/mcp",
			status: 403, header: HeaderTools, required: "toolset vision"},
		{name: "write mode without write scope", keyed: true, scopes: []string{"read"}, headers: map[string]string{HeaderReadonly: "false"}, path: "/mcp",
			status: 403, header: HeaderReadonly, required: "write"},
		{name: "write mode on a read-only listener", listener: readOnlyListener, headers: map[string]string{HeaderReadonly: "false"}, path: "/mcp",
			status: 403, header: HeaderReadonly, required: "mode FULL"},
		{name: "write tool on a read-only listener", listener: readOnlyListener, headers: map[string]string{HeaderTools: "task_create"}, path: "/mcp",
			status: 403, header: HeaderTools, required: "mode FULL"},
		{name: "read-only key may ask read-only", keyed: true, scopes: []string{"read"}, path: "/mcp/readonly", visible: []string{"task_list"}, hidden: []string{"task_create"}},
		{name: "a CORS preflight is not refused", method: http.MethodOptions, path: "/mcp/x/vision", visible: []string{"task_list"}},
		{name: "exclude alone narrows the listener's", headers: map[string]string{HeaderExcludeTools: "task_create"}, path: "/mcp",
			visible: []string{"task_list", "sdd_spec_get", "admin_key_list"}, hidden: []string{"task_create"}},
		{name: "exclude wins over tools", headers: map[string]string{HeaderTools: "task_create,sdd_spec_get", HeaderExcludeTools: "task_create"}, path: "/mcp",
			visible: []string{"sdd_spec_get"}, hidden: []string{"task_create", "task_list"}},
		{name: "exclude within toolsets", headers: map[string]string{HeaderToolsets: "core", HeaderExcludeTools: "task_list"}, path: "/mcp",
			visible: []string{"task_create"}, hidden: []string{"task_list", "sdd_spec_get"}},
		{name: "excluding a tool beyond the ceiling only narrows", headers: map[string]string{HeaderExcludeTools: "vision_describe"}, path: "/mcp",
			visible: []string{"task_create"}, hidden: []string{"vision_describe"}},
		{name: "unknown excluded tool", headers: map[string]string{HeaderExcludeTools: "no_such_tool"}, path: "/mcp", status: 400, header: HeaderExcludeTools},
		{name: "malformed", headers: map[string]string{HeaderReadonly: "perhaps"}, path: "/mcp", status: 400, header: HeaderReadonly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *clientsession.Settings
			h := s.chooseTools(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				got = clientsession.From(r.Context(), nil)
			}))
			method := http.MethodPost
			if tc.method != "" {
				method = tc.method
			}
			r := httptest.NewRequest(method, tc.path, nil)
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			ctx := r.Context()
			if tc.listener != nil {
				ctx = clientsession.With(ctx, tc.listener)
			}
			if tc.keyed {
				ctx = context.WithValue(ctx, principalKey{}, Principal{UserID: "sam", Scopes: tc.scopes})
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r.WithContext(ctx))
			if tc.status != 0 {
				var body struct {
					Error struct {
						Code int `json:"code"`
						Data struct {
							Code    string         `json:"code"`
							Details map[string]any `json:"details"`
						} `json:"data"`
					} `json:"error"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != tc.status {
					t.Fatalf("status %d body %s, want %d", w.Code, w.Body, tc.status)
				}
				d := body.Error.Data.Details
				if d["header"] != tc.header || (tc.required != "" && d["required"] != tc.required) {
					t.Fatalf("details %v, want header %q required %q", d, tc.header, tc.required)
				}
				if (tc.header == HeaderToolsets || tc.header == HeaderTools || tc.header == HeaderExcludeTools) && d["name"] == nil {
					t.Fatalf("details %v name nothing refused", d)
				}
				if tc.status == 403 && (body.Error.Data.Code != "ERR_FORBIDDEN" || d["allowed"] == nil) {
					t.Fatalf("403 body %s: want ERR_FORBIDDEN naming what is allowed", w.Body)
				}
				return
			}
			if w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if got == nil {
				got = testHandler{}.DefaultSessionSettings()
			}
			for _, name := range tc.visible {
				if !clientsession.Visible(got, toolOf(name)) {
					t.Errorf("%s hidden, want listed", name)
				}
			}
			for _, name := range tc.hidden {
				if clientsession.Visible(got, toolOf(name)) {
					t.Errorf("%s listed, want hidden", name)
				}
			}
		})
	}
}

// toolOf is the registry's view of a test tool.
func toolOf(name string) *registry.Tool {
	f := testTools[name]
	t := &registry.Tool{Name: name, Toolset: f.Toolset, ReadOnly: f.ReadOnly, Owner: "plugin-" + f.Toolset}
	if f.Scope == "" {
		t.Owner = registry.HostOwner
	}
	return t
}
