package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/registry"
)

// The context budget (docs/decisions.md D37): what a model reads of the
// default toolsets' tools (name, title, description, inputSchema and
// annotations) stays within registry.DefaultBudget, and docs/tools.md's
// context budget table states what tools/list really carries, per toolset.
func TestToolsListFitsItsBudget(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	published := budgetRows(t, string(doc))
	for _, c := range []struct {
		toolsets string
		tools    int
	}{
		{"", 25},
		{"all", 92},
	} {
		name := c.toolsets
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorkspace(t)
			var env []string
			if c.toolsets != "" {
				env = append(env, "CAIRN_TOOLSETS="+c.toolsets)
			}
			raw := rawToolsList(t, w, env...)
			var res struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatalf("tools/list result: %v", err)
			}
			if len(res.Tools) != c.tools {
				t.Errorf("%d tools listed, want %d", len(res.Tools), c.tools)
			}
			owner := toolsetsOf(t, w)
			measured := map[string]*budgetRow{}
			total := &budgetRow{}
			for _, tool := range res.Tools {
				var toolName string
				_ = json.Unmarshal(tool["name"], &toolName)
				for _, key := range []string{"inputSchema", "outputSchema"} {
					var s any
					if err := json.Unmarshal(tool[key], &s); err != nil {
						t.Errorf("%s %s: %v", toolName, key, err)
						continue
					}
					for _, p := range strictProblems(s, toolName+"."+key) {
						t.Error(p)
					}
				}
				wire, _ := json.Marshal(tool)
				delete(tool, "outputSchema")
				model, _ := json.Marshal(tool)
				set := owner[toolName]
				if measured[set] == nil {
					measured[set] = &budgetRow{}
				}
				for _, r := range []*budgetRow{measured[set], total} {
					r.tools++
					r.model += len(model)
					r.wire += len(wire)
				}
			}
			t.Logf("tools/list (%s): %d tools, %d bytes a model reads (budget %d), %d bytes on the wire", name, total.tools, total.model, registry.DefaultBudget, total.wire)
			if name == "default" {
				if total.model > registry.DefaultBudget {
					t.Errorf("the default toolsets cost a model %d bytes, over the budget of %d (docs/decisions.md D37): trim descriptions or share definitions", total.model, registry.DefaultBudget)
				}
				if want := published["**default**"]; want == nil || *want != *total {
					t.Errorf("docs/tools.md's default row %+v, tools/list carries %+v: run `make tools-doc`", want, total)
				}
				return
			}
			if want := published["**all**"]; want == nil || *want != *total {
				t.Errorf("docs/tools.md's all row %+v, tools/list carries %+v: run `make tools-doc`", want, total)
			}
			for set, got := range measured {
				if want := published[set]; want == nil || *want != *got {
					t.Errorf("docs/tools.md's %s row %+v, tools/list carries %+v: run `make tools-doc`", set, want, got)
				}
			}
		})
	}
}

// budgetRow is one row of docs/tools.md's context budget table.
type budgetRow struct{ tools, model, wire int }

// budgetRows reads docs/tools.md's context budget table, by its first cell
// (a toolset, or **default** and **all**).
func budgetRows(t *testing.T, doc string) map[string]*budgetRow {
	t.Helper()
	_, table, ok := strings.Cut(doc, "| Toolset | Tools | Model bytes | Wire bytes |")
	if !ok {
		t.Fatal("docs/tools.md has no context budget table: run `make tools-doc`")
	}
	rows := map[string]*budgetRow{}
	for _, line := range strings.Split(table, "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 {
			break
		}
		r := &budgetRow{}
		if _, err := fmt.Sscan(cells[1]+" "+cells[2]+" "+cells[3], &r.tools, &r.model, &r.wire); err != nil {
			t.Fatalf("docs/tools.md budget row %q: %v", line, err)
		}
		key, _, _ := strings.Cut(cells[0], " (")
		rows[key] = r
	}
	return rows
}

// toolsetsOf maps every tool to its toolset, from `cairn tools --json --all`.
func toolsetsOf(t *testing.T, w *workspace) map[string]string {
	t.Helper()
	code, out, errOut := runCairn(t, w, "", nil, "tools", "--json", "--all")
	if code != 0 {
		t.Fatalf("cairn tools --json: exit %d\n%s", code, errOut)
	}
	var list []struct {
		Name    string `json:"name"`
		Toolset string `json:"toolset"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("cairn tools --json: %v", err)
	}
	m := map[string]string{}
	for _, l := range list {
		m[l.Name] = l.Toolset
	}
	return m
}

// strictProblems lists what MCP Inspector's --strict schema checks refuse:
// a bare true (or {}) sub-schema, a type array (anyOf of single types says
// the same), and a property with no constraint at all.
func strictProblems(s any, at string) []string {
	var out []string
	switch v := s.(type) {
	case bool:
		return []string{at + ": bare boolean sub-schema"}
	case map[string]any:
		if len(v) == 0 {
			return []string{at + ": empty sub-schema"}
		}
		if _, arr := v["type"].([]any); arr {
			out = append(out, at+": type array")
		}
		if props, ok := v["properties"].(map[string]any); ok {
			for name, p := range props {
				pm, _ := p.(map[string]any)
				if !constrained(pm) {
					out = append(out, fmt.Sprintf("%s.%s: property without a type or other constraint", at, name))
				}
				out = append(out, strictProblems(p, at+"."+name)...)
			}
		}
		for _, key := range []string{"items", "additionalProperties", "not"} {
			if sub, ok := v[key]; ok {
				if b, isBool := sub.(bool); isBool && key == "additionalProperties" && !b {
					continue
				}
				out = append(out, strictProblems(sub, at+"."+key)...)
			}
		}
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if alts, ok := v[key].([]any); ok {
				for i, a := range alts {
					out = append(out, strictProblems(a, fmt.Sprintf("%s.%s[%d]", at, key, i))...)
				}
			}
		}
	}
	return out
}

func constrained(p map[string]any) bool {
	for _, k := range []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"} {
		if _, ok := p[k]; ok {
			return true
		}
	}
	return false
}

// rawToolsList runs `cairn serve` over stdio and returns the tools/list
// result exactly as the server sent it.
func rawToolsList(t *testing.T, w *workspace, extraEnv ...string) json.RawMessage {
	t.Helper()
	cmd := exec.Command(cairnBin, "serve")
	cmd.Dir = w.root
	cmd.Env = append(append([]string{}, w.env...), extraEnv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	send := func(msg string) {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatalf("write to cairn: %v\n%s", err, stderr.String())
		}
	}
	lines := make(chan []byte)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	await := func(id int) json.RawMessage {
		deadline := time.After(90 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("cairn closed stdout before answering %d\n%s", id, stderr.String())
				}
				var msg struct {
					ID     *int            `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
					continue
				}
				if len(msg.Error) > 0 {
					t.Fatalf("request %d: %s", id, msg.Error)
				}
				return msg.Result
			case <-deadline:
				t.Fatalf("no answer to request %d\n%s", id, stderr.String())
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"size","version":"1"}}}`)
	await(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	res := await(2)
	if bytes.Contains(res, []byte(`"nextCursor"`)) && !strings.Contains(string(res), `"nextCursor":""`) {
		t.Fatalf("tools/list is paged; the budget counts one page only")
	}
	return res
}
