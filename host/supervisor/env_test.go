package supervisor

import (
	"os"
	"testing"
)

// TestPluginEnvironment: a plugin that is not built in sees only the
// minimal environment, the host's deliberate CAIRN_* entries and its
// config env; a built-in area keeps the host's environment (docs/decisions.md D23).
func TestPluginEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-secret-from-host")
	t.Setenv("HOST_ONLY", "1")
	t.Setenv("LANG", "C.UTF-8")
	names := []string{"ANTHROPIC_API_KEY", "HOST_ONLY", "PATH", "HOME", "LANG", "CAIRN_ROOT", "FROM_CONFIG"}
	for _, c := range []struct {
		source  string
		present []string
		absent  []string
	}{
		{"config", []string{"PATH", "HOME", "LANG", "CAIRN_ROOT", "FROM_CONFIG"}, []string{"ANTHROPIC_API_KEY", "HOST_ONLY"}},
		{"dir", []string{"PATH", "HOME", "LANG", "CAIRN_ROOT", "FROM_CONFIG"}, []string{"ANTHROPIC_API_KEY", "HOST_ONLY"}},
		{"builtin", []string{"ANTHROPIC_API_KEY", "HOST_ONLY", "PATH", "CAIRN_ROOT", "FROM_CONFIG"}, nil},
	} {
		t.Run(c.source, func(t *testing.T) {
			env := testEnv(t, Backoff{})
			env.ExtraEnv = []string{"CAIRN_ROOT=" + env.Root}
			p := startTestkit(t, Spec{Source: c.source, Env: []string{"FROM_CONFIG=yes"}}, env, Hooks{})
			out, err := call(p, "testkit_env", map[string]any{"names": names})
			if err != nil {
				t.Fatal(err)
			}
			got := out["env"].(map[string]any)
			for _, k := range c.present {
				if _, ok := got[k]; !ok {
					t.Errorf("%s missing from a %s plugin's environment (got %v)", k, c.source, got)
				}
			}
			for _, k := range c.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s leaked into a %s plugin's environment", k, c.source)
				}
			}
			if got["FROM_CONFIG"] != "yes" || got["CAIRN_ROOT"] != env.Root {
				t.Errorf("config env / CAIRN_ROOT = %v / %v", got["FROM_CONFIG"], got["CAIRN_ROOT"])
			}
			if c.source != "builtin" && got["PATH"] != os.Getenv("PATH") {
				t.Errorf("PATH = %v", got["PATH"])
			}
		})
	}
}
