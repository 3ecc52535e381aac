package cli

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// `cairn serve` runs in a tree of that command alone (newRootFor), which
// must be the full tree's serve: same flags, same logging, same usage
// errors; any other command line gets the full tree.
func TestServeRunsInATreeOfItsOwn(t *testing.T) {
	full, alone := newRoot(), newRootFor([]string{"serve", "--no-daemon"})
	if n := len(alone.Commands()); n != 1 {
		t.Fatalf("the serve tree has %d top-level commands, want 1", n)
	}
	find := func(root *cobra.Command) *cobra.Command {
		c, _, err := root.Find([]string{"serve"})
		if err != nil || c.Name() != "serve" {
			t.Fatalf("no serve command: %v %v", c, err)
		}
		return c
	}
	flags := func(c *cobra.Command) map[string]string {
		out := map[string]string{}
		c.Flags().VisitAll(func(f *pflag.Flag) { out[f.Name] = f.Usage })
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) { out[f.Name] = f.Usage })
		return out
	}
	want, got := flags(find(full)), flags(find(alone))
	if len(want) != len(got) {
		t.Errorf("serve's flags alone %v, in the full tree %v", got, want)
	}
	for name, usage := range want {
		if got[name] != usage {
			t.Errorf("flag --%s: alone %q, in the full tree %q", name, got[name], usage)
		}
	}
	if find(alone).Annotations[servesAnnotation] == "" {
		t.Error("serve alone is not marked as a command that keeps its logs")
	}
	if len(newRootFor([]string{"version"}).Commands()) != len(full.Commands()) {
		t.Error("a command line other than serve did not get the full tree")
	}
}
