package cli

import (
	"os"
	"path/filepath"
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
