package sdk

import (
	"regexp"
	"strings"
	"testing"
)

// The hand-written name checks agree with the rules they state, on every
// name of up to three characters from an alphabet around the rules'
// edges, and at the length limits.
func TestNameChecksMatchTheirRules(t *testing.T) {
	plugin, tool := regexp.MustCompile(pluginNameRule), regexp.MustCompile(toolNameRule)
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "_", "-", ".", " ", "é", "`", "{", "@", "/"}
	var names []string
	var grow func(prefix string, left int)
	grow = func(prefix string, left int) {
		names = append(names, prefix)
		if left == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, left-1)
		}
	}
	grow("", 3)
	for _, n := range []int{63, 64, 65} {
		names = append(names, strings.Repeat("a", n), "-"+strings.Repeat("a", n-1), strings.Repeat("A", n))
	}
	for _, name := range names {
		if got, want := validPluginName(name), plugin.MatchString(name); got != want {
			t.Errorf("validPluginName(%q) = %v, the rule says %v", name, got, want)
		}
		if got, want := validToolName(name), tool.MatchString(name); got != want {
			t.Errorf("validToolName(%q) = %v, the rule says %v", name, got, want)
		}
	}
}
