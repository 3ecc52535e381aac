package supervisor

import (
	"slices"
	"testing"
)

// A plugin from outside the binary is asked for its tools after its
// configure hook, which may declare more (the built-in areas are asked
// beside it: they declare everything when they are built).
func TestToolsDeclaredWhileConfiguringAreListed(t *testing.T) {
	p := startTestkit(t, Spec{Settings: map[string]string{"declare_in_configure": "1"}}, testEnv(t, Backoff{}), Hooks{})
	tools, err := p.Tools(false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "testkit_configured") {
		t.Fatalf("the tool the configure hook declared is not listed: %v", names)
	}
	if _, err := call(p, "testkit_configured", map[string]any{"message": "hi"}); err != nil {
		t.Fatal(err)
	}
}
