package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

func lookup(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestResolveRefusals: every bad setting is a typed error naming it.
func TestResolveRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		env     map[string]string
		code    string
		message string
	}{
		{"root is a file", map[string]string{"CAIRN_ROOT": file}, errs.ConfigInvalid, "is not a directory"},
		{"root missing", map[string]string{"CAIRN_ROOT": filepath.Join(root, "nope")}, errs.ConfigInvalid, "is not a directory"},
		{"bad log level", map[string]string{"CAIRN_LOG_LEVEL": "loud"}, errs.ConfigInvalid, "CAIRN_LOG_LEVEL"},
		{"bad log format", map[string]string{"CAIRN_LOG_FORMAT": "xml"}, errs.ConfigInvalid, "CAIRN_LOG_FORMAT"},
		{"bad restart max", map[string]string{"CAIRN_PLUGIN_RESTART_MAX": "soon"}, errs.ConfigInvalid, "CAIRN_PLUGIN_RESTART_MAX"},
		{"restart max too small", map[string]string{"CAIRN_PLUGIN_RESTART_MAX": "1ms"}, errs.ConfigInvalid, "between 100ms and 1h"},
		{"restart max too large", map[string]string{"CAIRN_PLUGIN_RESTART_MAX": "2h"}, errs.ConfigInvalid, "between 100ms and 1h"},
		{"tsa url not a url", map[string]string{"CAIRN_AUDIT_TSA_URL": "tsa.example:318"}, errs.ConfigInvalid, "CAIRN_AUDIT_TSA_URL"},
		{"tsa url not http", map[string]string{"CAIRN_AUDIT_TSA_URL": "ftp://tsa.example/"}, errs.ConfigInvalid, "CAIRN_AUDIT_TSA_URL"},
		{"tsa url without host", map[string]string{"CAIRN_AUDIT_TSA_URL": "https:///ts"}, errs.ConfigInvalid, "CAIRN_AUDIT_TSA_URL"},
		{"explicit config missing", map[string]string{"CAIRN_CONFIG": filepath.Join(root, "missing.yaml")}, errs.ConfigInvalid, "missing.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CAIRN_ROOT": root}
			for k, v := range c.env {
				env[k] = v
			}
			_, err := Resolve(lookup(env), root, "")
			e, ok := errs.As(err)
			if !ok || e.Code != c.code || e.Status != 400 || !strings.Contains(e.Message, c.message) {
				t.Fatalf("err = %v, want %s containing %q", err, c.code, c.message)
			}
		})
	}
}

// TestSessionSettingsAreForgiven: a session's own settings never stop it;
// each mistake is one warning naming the variable, and what is valid stays.
func TestSessionSettingsAreForgiven(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, c := range []struct {
		name     string
		env      map[string]string
		warning  string
		mode     string
		toolsets string
		project  string
	}{
		{"unknown mode serves read-only", map[string]string{"CAIRN_MODE": "turbo"}, `CAIRN_MODE "turbo" is not a mode`, ModeReadOnly, "core,sdd", ""},
		{"lower-case mode is a mode", map[string]string{"CAIRN_MODE": "readonly"}, "", ModeReadOnly, "core,sdd", ""},
		{"bad toolset entry dropped", map[string]string{"CAIRN_TOOLSETS": "core,Bad!"}, `"Bad!" ignored`, ModeFull, "core", ""},
		{"exclusion kept beside a bad entry", map[string]string{"CAIRN_TOOLSETS": "all,-sdd,?"}, `"?" ignored`, ModeFull, "-sdd,all", ""},
		{"nothing valid serves the system tools only", map[string]string{"CAIRN_TOOLSETS": "Core!"}, SystemOnlyNote, ModeFull, "none", ""},
		{"nothing valid of several serves the system tools only", map[string]string{"CAIRN_TOOLSETS": "Core!, Sdd?"}, `"Core!", "Sdd?" ignored`, ModeFull, "none", ""},
		{"none is the system tools only", map[string]string{"CAIRN_TOOLSETS": "none"}, "", ModeFull, "none", ""},
		{"bad project ignored", map[string]string{"CAIRN_PROJECT": "Not A Slug"}, `CAIRN_PROJECT "Not A Slug" ignored`, ModeFull, "core,sdd", ""},
		{"good project kept", map[string]string{"CAIRN_PROJECT": "board"}, "", ModeFull, "core,sdd", "board"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CAIRN_ROOT": root}
			for k, v := range c.env {
				env[k] = v
			}
			s, err := Resolve(lookup(env), root, "")
			if err != nil {
				t.Fatalf("a session setting stopped the start: %v", err)
			}
			switch {
			case c.warning == "" && len(s.Warnings) > 0:
				t.Errorf("warnings %q, want none", s.Warnings)
			case c.warning != "" && (len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], c.warning)):
				t.Errorf("warnings %q, want one containing %q", s.Warnings, c.warning)
			}
			if s.Mode != c.mode || s.Toolsets.String() != c.toolsets || s.Project != c.project {
				t.Errorf("mode %s toolsets %s project %q; want %s %s %q", s.Mode, s.Toolsets, s.Project, c.mode, c.toolsets, c.project)
			}
		})
	}
}

func TestResolveDefaults(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	s, err := Resolve(lookup(map[string]string{"HOME": "/home/op"}), root, "")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		Root: root, DataDir: filepath.Join(root, ".cairn", "data"), Mode: ModeFull,
		ConfigFile: filepath.Join(root, ".cairn", "config.yaml"), PluginDir: filepath.Join(root, ".cairn", "plugins"),
		LogLevel: "info", LogFormat: "text", Env: "production", TrustFile: "/home/op/.config/cairn/trust.json",
		RestartBackoffMax: 30 * time.Second,
	}
	if s.Root != want.Root || s.DataDir != want.DataDir || s.Mode != want.Mode || s.ConfigFile != want.ConfigFile ||
		s.PluginDir != want.PluginDir || s.LogLevel != want.LogLevel || s.LogFormat != want.LogFormat || s.Env != want.Env ||
		s.TrustFile != want.TrustFile || s.RestartBackoffMax != want.RestartBackoffMax || s.ConfigExplicit || s.PluginDirExplicit {
		t.Fatalf("got %+v", s)
	}
	if s.Toolsets.String() != "core,sdd" || s.Toolsets.Explicit {
		t.Fatalf("toolsets %s explicit=%v", s.Toolsets, s.Toolsets.Explicit)
	}
	if !s.ConfigFromWorkspace() || !s.PluginDirFromWorkspace() {
		t.Fatal("the default config file and plugin dir are workspace content")
	}
}

func TestResolveModesCaseInsensitive(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, m := range []string{"full", "READONLY", "Test", "minimal"} {
		s, err := Resolve(lookup(map[string]string{"CAIRN_MODE": m}), root, "")
		if err != nil || s.Mode != strings.ToUpper(m) {
			t.Fatalf("mode %s: %v %v", m, s.Mode, err)
		}
	}
}

func TestParseToolsets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		allowed []string
		denied  []string
		err     bool
	}{
		{"core,sdd", []string{"core", "sdd", "weather"}, []string{"vision", "admin"}, false},
		{"all", []string{"core", "admin", "vision", "weather"}, nil, false},
		{"all,-admin", []string{"core"}, []string{"admin"}, false},
		{"core,-weather", []string{"core"}, []string{"weather", "sdd"}, false},
		{" core , ,sdd ", []string{"core", "sdd"}, nil, false},
		{"", []string{"weather"}, []string{"core"}, false},
		{"core;sdd", nil, nil, true},
		{"-", nil, nil, true},
		{"UPPER", nil, nil, true},
	} {
		ts, err := ParseToolsets(c.in)
		if c.err {
			if e, ok := errs.As(err); !ok || e.Code != errs.ConfigInvalid {
				t.Errorf("%q: err = %v, want ERR_CONFIG_INVALID", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		for _, a := range c.allowed {
			if !ts.Allows(a) {
				t.Errorf("%q should allow %s", c.in, a)
			}
		}
		for _, d := range c.denied {
			if ts.Allows(d) {
				t.Errorf("%q should not allow %s", c.in, d)
			}
		}
	}
}

func FuzzParseToolsets(f *testing.F) {
	for _, s := range []string{"core,sdd", "all,-admin", "", "x,,-y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseToolsets(s)
		if err != nil {
			if e, ok := errs.As(err); !ok || e.Code != errs.ConfigInvalid {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for name := range ts.Enabled {
			if !toolsetPattern().MatchString(name) {
				t.Fatalf("accepted toolset %q", name)
			}
		}
	})
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name, yaml, err string
	}{
		{"valid", "plugins:\n  weather:\n    path: ./bin/w\n    args: [a]\n    env: {K: V}\n    settings: {s: t}\n    required: true\n", ""},
		{"empty", "", ""},
		{"unknown key", "plugins:\n  weather:\n    pth: ./x\n", "field pth not found"},
		{"unknown top level", "plugin: {}\n", "field plugin not found"},
		{"bad name", "plugins:\n  Weather!:\n    path: /x\n", `plugin name "Weather!" must match`},
		{"bad sha", "plugins:\n  w:\n    path: /x\n    sha256: abc\n", "plugins.w.sha256 must be 64 hex digits"},
		{"not yaml", "plugins: [\n", "config file"},
		{"wrong type", "plugins:\n  w:\n    args: notalist\n", "cannot unmarshal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".yaml")
			if err := os.WriteFile(p, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := LoadFile(p, false)
			if c.err != "" {
				e, ok := errs.As(err)
				if !ok || e.Code != errs.ConfigInvalid || e.Status != 400 || !strings.Contains(e.Message, c.err) {
					t.Fatalf("err = %v, want ERR_CONFIG_INVALID containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.name == "valid" {
				w := f.Plugins["weather"]
				if w.Path != filepath.Join(dir, "bin", "w") || !w.Required || w.Env["K"] != "V" {
					t.Fatalf("entry %+v (a relative path is relative to the file)", w)
				}
			}
		})
	}
	upper := filepath.Join(dir, "upper.yaml")
	_ = os.WriteFile(upper, []byte("plugins:\n  w:\n    path: /x\n    sha256: "+strings.Repeat("AB", 32)+"\n"), 0o644)
	if f, err := LoadFile(upper, false); err != nil || f.Plugins["w"].SHA256 != strings.Repeat("ab", 32) {
		t.Fatalf("sha256 is not lowercased: %v %v", f.Plugins["w"].SHA256, err)
	}
	if _, err := LoadFile(filepath.Join(dir, "absent.yaml"), true); err != nil {
		t.Fatalf("optional missing file: %v", err)
	}
}

// TestWorkspaceOwnership: what counts as workspace content for D23.
func TestWorkspaceOwnership(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	cfgOutside := filepath.Join(outside, "ops.yaml")
	cfgInside := filepath.Join(root, "ops.yaml")
	for _, p := range []string{cfgOutside, cfgInside} {
		if err := os.WriteFile(p, []byte("plugins: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink inside the workspace that points outside is still named
	// by the workspace; one outside pointing in is workspace content.
	linkIn := filepath.Join(outside, "link-in")
	if err := os.Symlink(root, linkIn); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name                    string
		env                     map[string]string
		flag                    string
		configFromWS, dirFromWS bool
	}{
		{"defaults", nil, "", true, true},
		{"operator config outside via env", map[string]string{"CAIRN_CONFIG": cfgOutside}, "", false, true},
		{"operator config outside via flag", nil, cfgOutside, false, true},
		{"explicit config inside the workspace", map[string]string{"CAIRN_CONFIG": cfgInside}, "", true, true},
		{"explicit config reached through a symlink into the workspace", nil, filepath.Join(linkIn, "ops.yaml"), true, true},
		{"operator plugin dir outside", map[string]string{"CAIRN_PLUGIN_DIR": outside}, "", true, false},
		{"explicit plugin dir inside", map[string]string{"CAIRN_PLUGIN_DIR": filepath.Join(root, "plugins")}, "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CAIRN_ROOT": root}
			for k, v := range c.env {
				env[k] = v
			}
			s, err := Resolve(lookup(env), root, c.flag)
			if err != nil {
				t.Fatal(err)
			}
			if s.ConfigFromWorkspace() != c.configFromWS || s.PluginDirFromWorkspace() != c.dirFromWS {
				t.Fatalf("config from workspace %v (want %v), plugin dir from workspace %v (want %v)",
					s.ConfigFromWorkspace(), c.configFromWS, s.PluginDirFromWorkspace(), c.dirFromWS)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		root, path string
		want       bool
	}{
		{"/r", "/r", true},
		{"/r", "/r/a/b", true},
		{"/r", "/r/../r/a", true},
		{"/r", "/rx/a", false},
		{"/r", "/", false},
		{"/r", "/r/..a", true},
		{"/r", "/other", false},
	} {
		if got := Within(c.root, c.path); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.root, c.path, got, c.want)
		}
	}
}
