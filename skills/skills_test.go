package skills_test

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	registry "github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/skills"
)

// tools are the MCP tools a skill may name: Area A's 15 and Area C's 10.
// A skill that names anything else with a tool-like prefix is describing a
// tool that does not exist.
var tools = []string{
	"server_ping", "server_health",
	"task_create", "task_get", "task_update", "task_list", "task_next_actions", "task_context",
	"skill_list",
	"thought_record", "thought_record_list", "audit_session_start", "audit_verify_chain",
	"merkle_finalize", "merkle_root",
	"sdd_vitals", "sdd_plan", "sdd_discuss", "sdd_state", "sdd_validate",
	"sdd_lease", "sdd_dash", "sdd_evolve", "sdd_agent", "sdd_skill",
}

// notTools are field and record names that share a tool prefix.
var notTools = []string{"task_id", "thought_id", "thought_count", "task_created", "task_updated"}

var (
	toolLike = regexp.MustCompile(`\b(?:server|task|skill|thought|audit|merkle|sdd|agent)_[a-z_]+\b`)
	semver   = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	kebab    = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
)

func TestCanonicalSkills(t *testing.T) {
	dirs, err := fs.ReadDir(skills.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 24 {
		t.Fatalf("got %d skill directories, want 24", len(dirs))
	}
	used := map[string]bool{}
	for _, d := range dirs {
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			if !d.IsDir() || !strings.HasPrefix(name, "cairn-") {
				t.Fatalf("%s: want a cairn-* directory", name)
			}
			data, err := fs.ReadFile(skills.FS, name+"/SKILL.md")
			if err != nil {
				t.Fatal(err)
			}
			m, err := registry.Parse(data)
			if err != nil {
				t.Fatalf("frontmatter: %v", err)
			}
			if m.Name != name {
				t.Errorf("name %q, want the directory name %q", m.Name, name)
			}
			if !semver.MatchString(m.Version) {
				t.Errorf("version %q is not semver", m.Version)
			}
			if !strings.HasPrefix(m.Description, "Use ") || !strings.HasSuffix(m.Description, ".") ||
				strings.Count(m.Description, ". ") > 0 {
				t.Errorf("description should be one sentence saying when to use it: %q", m.Description)
			}
			if len(m.Capabilities) == 0 {
				t.Error("no capabilities")
			}
			for _, c := range m.Capabilities {
				if !kebab.MatchString(c) {
					t.Errorf("capability %q is not kebab-case", c)
				}
			}
			lines := strings.Count(string(data), "\n")
			if lines < 40 || lines > 120 {
				t.Errorf("%d lines; keep a skill between 40 and 120", lines)
			}
			for _, w := range toolLike.FindAllString(string(data), -1) {
				switch {
				case slices.Contains(tools, w):
					used[w] = true
				case !slices.Contains(notTools, w):
					t.Errorf("names %q, which is not a cairn tool", w)
				}
			}
		})
	}
	for _, tool := range tools {
		if !used[tool] {
			t.Errorf("no skill describes %s", tool)
		}
	}
}
