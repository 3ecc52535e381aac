package cli

import (
	"regexp"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk"
)

func init() {
	// The test binary links no area; register stand-ins so onlyAreas has
	// built-in areas to switch off.
	for i, name := range []string{"core", "sdd", "admin"} {
		builtin.Register(builtin.Area{Name: name, Order: i, New: func() *sdk.Plugin { return nil }})
	}
}

// A command's own host starts the areas it needs, the config file's
// replacement of them included, and nothing else.
func TestOnlyAreas(t *testing.T) {
	s := config.Settings{
		Mode:      config.ModeReadOnly,
		PluginDir: "/somewhere/.cairn/plugins",
		File: config.File{Plugins: map[string]config.PluginEntry{
			"admin":  {Path: "/opt/cairn-plugin-admin", Settings: map[string]string{"key_prefix": "acme"}},
			"semver": {Path: "/opt/cairn-plugin-semver"},
		}},
	}
	onlyAreas(&s, []string{"admin"})
	if s.Mode != config.ModeFull || !s.Toolsets.All || s.PluginDir != "" {
		t.Fatalf("mode %s toolsets %v plugin dir %q", s.Mode, s.Toolsets, s.PluginDir)
	}
	admin := s.File.Plugins["admin"]
	if admin.Path != "/opt/cairn-plugin-admin" || admin.Disabled || admin.Settings["key_prefix"] != "acme" || admin.Settings["background"] != "off" {
		t.Fatalf("admin entry %+v", admin)
	}
	for _, name := range []string{"core", "sdd"} {
		if !s.File.Plugins[name].Disabled {
			t.Errorf("built-in area %s not disabled", name)
		}
	}
	if _, ok := s.File.Plugins["semver"]; ok {
		t.Errorf("third-party plugin kept")
	}
}

func TestStr(t *testing.T) {
	v := obj{"id": "k1", "n": 3.0, "nested": obj{"x": "y", "null": nil}, "list": []any{"read", "write"}}
	for path, want := range map[string]string{
		"id": "k1", "n": "3", "nested.x": "y", "nested.null": "-", "missing": "-", "id.deeper": "-", "list": "read,write", "nested": `{"null":null,"x":"y"}`,
	} {
		if got := str(v, path); got != want {
			t.Errorf("str(%s) = %q, want %q", path, got, want)
		}
	}
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

func TestValidSlug(t *testing.T) {
	for s, want := range map[string]bool{
		"web": true, "a": true, "mobile-2": true, "0x": true, "": false, "-web": false, "Web": false, "we b": false,
		"a23456789012345678901234567890123456789012345678901234567890123":  true,
		"a234567890123456789012345678901234567890123456789012345678901234": false,
	} {
		if got := validSlug(s); got != want {
			t.Errorf("validSlug(%q) = %v, want %v", s, got, want)
		}
	}
}

// validSlug agrees with D7's pattern on every input.
func FuzzValidSlug(f *testing.F) {
	for _, s := range []string{"web", "-x", "a-", "é", "A", "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if validSlug(s) != slugPattern.MatchString(s) {
			t.Fatalf("validSlug(%q) = %v, pattern says %v", s, validSlug(s), slugPattern.MatchString(s))
		}
	})
}
