package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairn-mcp/cairn/host/cli/toolcmd"
)

// generatedTools lists the tools the generated commands under c call.
func generatedTools(c *cobra.Command) []string {
	var out []string
	if t := c.Annotations[toolcmd.ToolAnnotation]; t != "" {
		out = append(out, t)
	}
	for _, s := range c.Commands() {
		out = append(out, generatedTools(s)...)
	}
	return out
}

// The admin commands are made from a copy of the admin area's tool
// snapshots, which the area's own test holds to its code; this holds the
// copy to the snapshots. UPDATE_CLI_TOOLS=1 rewrites it.
func TestAdminToolsMatchSnapshots(t *testing.T) {
	t.Parallel()
	tools := generatedTools(newAdmin())
	sort.Strings(tools)
	want := make([]toolcmd.Tool, 0, len(tools))
	for _, name := range tools {
		raw, err := os.ReadFile(filepath.Join("..", "..", "plugins", "admin", "testdata", "toolsnaps", name+".snap"))
		if err != nil {
			t.Fatalf("command for %s: %v", name, err)
		}
		var snap struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatal(err)
		}
		want = append(want, toolcmd.Tool{Name: snap.Name, Title: snap.Title, Description: snap.Description, ReadOnly: snap.Annotations.ReadOnly, InputSchema: snap.InputSchema})
	}
	if os.Getenv("UPDATE_CLI_TOOLS") == "1" {
		out, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("admin_tools.json", append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var got []toolcmd.Tool
	if err := json.Unmarshal(adminToolsJSON, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("admin_tools.json has %d tools, the commands call %d: run UPDATE_CLI_TOOLS=1 go test -run TestAdminToolsMatchSnapshots ./host/cli/", len(got), len(want))
	}
	for i := range want {
		if !sameTool(got[i], want[i]) {
			t.Errorf("admin_tools.json: %s differs from plugins/admin/testdata/toolsnaps/%s.snap: run UPDATE_CLI_TOOLS=1 go test -run TestAdminToolsMatchSnapshots ./host/cli/", got[i].Name, want[i].Name)
		}
	}
}

func sameTool(a, b toolcmd.Tool) bool {
	var sa, sb any
	if json.Unmarshal(a.InputSchema, &sa) != nil || json.Unmarshal(b.InputSchema, &sb) != nil {
		return false
	}
	a.InputSchema, b.InputSchema = nil, nil
	return reflect.DeepEqual(a, b) && reflect.DeepEqual(sa, sb)
}

// Every verb the admin CLI had keeps its path, and the flags scripts and
// docs use keep their spelling.
func TestAdminCommandsKeepTheirSpelling(t *testing.T) {
	t.Parallel()
	admin := newAdmin()
	for path, flags := range map[string][]string{
		"keys create":            {"name", "user", "org", "workspace", "expires-at", "scope", "permission", "per-minute", "per-hour", "per-day"},
		"keys list":              {"user", "org", "workspace", "status", "limit", "offset"},
		"keys get":               nil,
		"keys update":            {"name", "scope", "permission", "status", "per-minute", "per-hour", "per-day"},
		"keys revoke":            nil,
		"keys rotate":            {"grace"},
		"keys validate":          nil,
		"keys usage":             nil,
		"keys audit":             nil,
		"workspaces create":      {"name", "description", "owner", "org", "max-projects", "max-members", "storage-gb", "api-calls-per-day", "max-conversations"},
		"workspaces list":        {"owner", "org", "status", "limit", "offset"},
		"workspaces get":         nil,
		"workspaces update":      {"name", "description", "status", "max-projects", "max-members", "storage-gb", "api-calls-per-day", "max-conversations"},
		"workspaces delete":      nil,
		"workspaces stats":       nil,
		"members add":            {"role"},
		"members list":           nil,
		"members get":            nil,
		"members role":           nil,
		"members remove":         nil,
		"invitations create":     {"email", "role", "message"},
		"invitations accept":     {"user"},
		"invitations revoke":     nil,
		"invitations list":       nil,
		"projects create":        {"name", "slug", "description"},
		"projects list":          {"status"},
		"projects get":           nil,
		"projects update":        {"name", "description"},
		"projects archive":       nil,
		"projects unarchive":     nil,
		"projects delete":        nil,
		"webhooks register":      {"event", "description", "secret", "workspace", "max-retries", "timeout"},
		"webhooks list":          {"status", "event", "limit"},
		"webhooks get":           nil,
		"webhooks update":        {"url", "event", "status", "description", "max-retries", "timeout"},
		"webhooks pause":         nil,
		"webhooks resume":        nil,
		"webhooks unregister":    nil,
		"webhooks rotate-secret": {"secret"},
		"webhooks test":          nil,
		"webhooks deliveries":    {"status"},
		"webhooks stats":         nil,
		"webhooks trigger":       {"payload", "workspace"},
		"webhooks event-types":   nil,
	} {
		cmd, rest, err := admin.Find(strings.Fields(path))
		if err != nil || len(rest) != 0 || cmd.Annotations[toolcmd.ToolAnnotation] == "" {
			t.Errorf("admin %s: %v (found %q)", path, err, cmd.CommandPath())
			continue
		}
		for _, f := range flags {
			if cmd.Flags().Lookup(f) == nil {
				t.Errorf("admin %s has no --%s", path, f)
			}
		}
	}
}

// No generated flag hides a flag of the commands above it (--config, the
// config file; --json).
func TestAdminFlagsShadowNoParentFlag(t *testing.T) {
	t.Parallel()
	admin := newAdmin()
	var walk func(c *cobra.Command, inherited map[string]bool)
	walk = func(c *cobra.Command, inherited map[string]bool) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if inherited[f.Name] {
				t.Errorf("%s: --%s hides the flag of a command above it", c.CommandPath(), f.Name)
			}
		})
		next := map[string]bool{}
		for k := range inherited {
			next[k] = true
		}
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { next[f.Name] = true })
		for _, s := range c.Commands() {
			walk(s, next)
		}
	}
	walk(admin, map[string]bool{})
}

// docs/cli.md's command reference is generated from the commands; this keeps
// the committed file in step with them.
func TestCLIReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	path := filepath.Join("..", "..", "docs", "cli.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(doc) != cliDoc(string(doc)) {
		t.Fatalf("docs/cli.md's command reference is stale: run `make cli-doc` and commit the result")
	}
}
