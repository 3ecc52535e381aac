package clientsession

import (
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/sdk"
)

func TestProjectSlug(t *testing.T) {
	t.Parallel()
	for root, want := range map[string]string{
		"/src/web":                        "web",
		"/src/My Repo.git":                "my-repo-git",
		"/src/--lead":                     "lead",
		"/src/Ünïcode":                    "n-code",
		"/":                               "workspace",
		"/src/___":                        "workspace",
		"/src/" + strings.Repeat("a", 80): strings.Repeat("a", 63),
	} {
		if got := ProjectSlug(root); got != want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", root, got, want)
		}
	}
}

func TestVisibilityAndRefusal(t *testing.T) {
	t.Parallel()
	core, _ := config.ParseToolsets("core")
	all, _ := config.ParseToolsets("all")
	write := &registry.Tool{Name: "task_create", Owner: "core", Toolset: "core"}
	read := &registry.Tool{Name: "task_list", Owner: "core", Toolset: "core", ReadOnly: true}
	sdd := &registry.Tool{Name: "sdd_vitals", Owner: "sdd", Toolset: "sdd", ReadOnly: true}
	internal := &registry.Tool{Name: "admin_key_authenticate", Owner: "admin", Toolset: sdk.InternalToolset}
	ping := &registry.Tool{Name: "server_ping", Owner: registry.HostOwner, Toolset: "system", ReadOnly: true}
	cases := []struct {
		name     string
		s        Settings
		tool     *registry.Tool
		visible  bool
		required string
	}{
		{"full writes", Settings{Mode: config.ModeFull, Toolsets: core}, write, true, ""},
		{"readonly refuses writes", Settings{Mode: config.ModeReadOnly, Toolsets: core}, write, false, "mode FULL"},
		{"readonly reads", Settings{Mode: config.ModeReadOnly, Toolsets: core}, read, true, ""},
		{"toolset off", Settings{Mode: config.ModeFull, Toolsets: core}, sdd, false, "toolset sdd"},
		{"toolset all", Settings{Mode: config.ModeFull, Toolsets: all}, sdd, true, ""},
		{"minimal", Settings{Mode: config.ModeMinimal, Toolsets: all}, read, false, "mode FULL"},
		{"host tools always", Settings{Mode: config.ModeMinimal, Toolsets: core}, ping, true, ""},
		{"internal never", Settings{Mode: config.ModeFull, Toolsets: all}, internal, false, ""},
	}
	for _, c := range cases {
		if got := Visible(&c.s, c.tool); got != c.visible {
			t.Errorf("%s: visible = %v", c.name, got)
			continue
		}
		if c.visible {
			continue
		}
		e := Refusal(&c.s, c.tool)
		if c.required == "" {
			if e.Status != 404 {
				t.Errorf("%s: status %d, want 404", c.name, e.Status)
			}
			continue
		}
		if e.Status != 403 || e.Code != "ERR_FORBIDDEN" || e.Details["required"] != c.required {
			t.Errorf("%s: refusal %+v, want 403 requiring %q", c.name, e, c.required)
		}
	}
}

func TestLoadLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		msg, calls string
		wantMsg    int
		wantCalls  int
		bad        bool
	}{
		{"", "", DefaultMaxMessage, DefaultMaxConcurrentCalls, false},
		{"1048576", "4", 1 << 20, 4, false},
		{"2MiB", "", 2 << 20, DefaultMaxConcurrentCalls, false},
		{"512KiB", "1024", 512 << 10, 1024, false},
		{"10", "", 0, 0, true},
		{"lots", "", 0, 0, true},
		{"", "0", 0, 0, true},
		{"", "2000", 0, 0, true},
	}
	for _, c := range cases {
		l, err := LoadLimits(func(k string) string {
			return map[string]string{"CAIRN_MAX_MESSAGE": c.msg, "CAIRN_MAX_CONCURRENT_CALLS": c.calls}[k]
		})
		if c.bad {
			if err == nil {
				t.Errorf("%q/%q accepted", c.msg, c.calls)
			}
			continue
		}
		if err != nil || l.MaxMessage != c.wantMsg || l.MaxCalls != c.wantCalls {
			t.Errorf("%q/%q = %+v, %v", c.msg, c.calls, l, err)
		}
	}
}
