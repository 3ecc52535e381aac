package httpserve

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf8"
)

func TestParseChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		headers  map[string][]string
		path     string
		want     requestChoice
		status   int
		inHeader string
	}{
		{name: "nothing", path: "/mcp"},
		{name: "trailing slash", path: "/mcp/"},
		{name: "toolsets", headers: map[string][]string{"X-MCP-Toolsets": {" core , sdd,,core "}}, path: "/mcp",
			want: requestChoice{toolsets: []string{"core", "sdd"}, toolsetsFrom: HeaderToolsets}},
		{name: "toolsets on two lines", headers: map[string][]string{"X-Mcp-Toolsets": {"core", "vision"}}, path: "/mcp",
			want: requestChoice{toolsets: []string{"core", "vision"}, toolsetsFrom: HeaderToolsets}},
		{name: "all", headers: map[string][]string{"X-MCP-Toolsets": {"all"}}, path: "/mcp",
			want: requestChoice{toolsets: []string{"all"}, toolsetsFrom: HeaderToolsets}},
		{name: "tools", headers: map[string][]string{"X-MCP-Tools": {"task_list, task_get"}}, path: "/mcp",
			want: requestChoice{tools: []string{"task_list", "task_get"}}},
		{name: "exclude tools", headers: map[string][]string{"X-MCP-Exclude-Tools": {"task_delete,task_create", "task_delete"}}, path: "/mcp",
			want: requestChoice{exclude: []string{"task_delete", "task_create"}}},
		{name: "bad excluded tool name", headers: map[string][]string{"X-MCP-Exclude-Tools": {"task delete"}}, path: "/mcp", status: 400, inHeader: HeaderExcludeTools},
		{name: "readonly true", headers: map[string][]string{"X-MCP-Readonly": {"TRUE"}}, path: "/mcp",
			want: requestChoice{readOnly: true, readOnlySet: true, readOnlyFrom: HeaderReadonly}},
		{name: "readonly false", headers: map[string][]string{"X-MCP-Readonly": {"0"}}, path: "/mcp",
			want: requestChoice{readOnlySet: true, readOnlyFrom: HeaderReadonly}},
		{name: "readonly URL", path: "/mcp/readonly",
			want: requestChoice{readOnly: true, readOnlySet: true, readOnlyFrom: "URL /readonly"}},
		{name: "readonly URL beats the header", headers: map[string][]string{"X-MCP-Readonly": {"false"}}, path: "/mcp/readonly",
			want: requestChoice{readOnly: true, readOnlySet: true, readOnlyFrom: "URL /readonly"}},
		{name: "toolset URL beats the header", headers: map[string][]string{"X-MCP-Toolsets": {"sdd"}}, path: "/mcp/x/core",
			want: requestChoice{toolsets: []string{"core"}, toolsetsFrom: "URL /mcp/x/core"}},
		{name: "toolset URL read-only", path: "/mcp/x/core/readonly",
			want: requestChoice{toolsets: []string{"core"}, toolsetsFrom: "URL /mcp/x/core", readOnly: true, readOnlySet: true, readOnlyFrom: "URL /readonly"}},
		{name: "bad toolset name", headers: map[string][]string{"X-MCP-Toolsets": {"core,Core!"}}, path: "/mcp", status: 400, inHeader: HeaderToolsets},
		{name: "exclusion is not a choice", headers: map[string][]string{"X-MCP-Toolsets": {"-vision"}}, path: "/mcp", status: 400, inHeader: HeaderToolsets},
		{name: "bad tool name", headers: map[string][]string{"X-MCP-Tools": {"task list"}}, path: "/mcp", status: 400, inHeader: HeaderTools},
		{name: "bad readonly", headers: map[string][]string{"X-MCP-Readonly": {"maybe"}}, path: "/mcp", status: 400, inHeader: HeaderReadonly},
		{name: "bad URL toolset", path: "/mcp/x/Core", status: 400, inHeader: "URL"},
		{name: "unknown path", path: "/mcp/y/core", status: 404, inHeader: "URL"},
		{name: "x without a toolset", path: "/mcp/x", status: 404, inHeader: "URL"},
		{name: "too deep", path: "/mcp/x/core/readonly/more", status: 404, inHeader: "URL"},
		{name: "not /mcp", path: "/mcpx", status: 404, inHeader: "URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, vs := range tc.headers {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			got, err := parseChoice(h, tc.path)
			if tc.status != 0 {
				if err == nil || err.Status != tc.status || err.Details["header"] != tc.inHeader {
					t.Fatalf("parseChoice = %+v, %v; want a %d naming %s", got, err, tc.status, tc.inHeader)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseChoice: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("parseChoice = %+v, want %+v", got, tc.want)
			}
			if got.empty() != reflect.DeepEqual(tc.want, requestChoice{}) {
				t.Fatalf("empty() = %v for %+v", got.empty(), got)
			}
		})
	}
}

func TestParseChoiceBoundsEntries(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	v := "t0"
	for i := 1; i <= maxChoiceEntries; i++ {
		v += ",t" + strconv.Itoa(i)
	}
	h.Set(HeaderTools, v)
	if _, err := parseChoice(h, "/mcp"); err == nil || err.Status != 400 {
		t.Fatalf("%d tools: %v, want a 400", maxChoiceEntries+1, err)
	}
}

// The header parser never panics, answers a 400 or 404 naming what it
// refused, and every name it accepts is a well-formed one.
func FuzzParseChoice(f *testing.F) {
	for _, seed := range [][3]string{
		{"core,sdd", "task_list", "true"}, {"all", "", ""}, {"", "", "false"}, {",,", " , ", " "},
		{"-vision", "a b", "maybe"}, {"core\x00", "é", "1"},
	} {
		f.Add(seed[0], seed[1], seed[2], "/mcp")
	}
	f.Add("", "", "", "/mcp/x/core/readonly")
	f.Add("", "", "", "/mcp/x//readonly")
	f.Fuzz(func(t *testing.T, toolsets, tools, readonly, path string) {
		h := http.Header{}
		h.Set(HeaderToolsets, toolsets)
		h.Set(HeaderTools, tools)
		h.Set(HeaderReadonly, readonly)
		c, err := parseChoice(h, path)
		if err != nil {
			if err.Status != 400 && err.Status != 404 {
				t.Fatalf("status %d", err.Status)
			}
			if err.Details["header"] == nil {
				t.Fatalf("error names no header: %v", err)
			}
			return
		}
		for _, n := range c.toolsets {
			if !toolsetName().MatchString(n) {
				t.Fatalf("accepted toolset %q", n)
			}
		}
		for _, n := range c.tools {
			if !toolName().MatchString(n) || !utf8.ValidString(n) {
				t.Fatalf("accepted tool %q", n)
			}
		}
		if c.readOnlySet == (c.readOnlyFrom == "") {
			t.Fatalf("readOnlySet %v from %q", c.readOnlySet, c.readOnlyFrom)
		}
	})
}
