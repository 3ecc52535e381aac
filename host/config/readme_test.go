package config

import (
	"os"
	"strings"
	"testing"
)

// Every setting the host reads is documented in the README's
// configuration table, so an operator never has to read the code.
func TestEveryVarIsInTheReadme(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range Vars {
		if !strings.Contains(readme, "| `"+v.Name+"` |") {
			t.Errorf("README's configuration table has no row for %s", v.Name)
		}
	}
}
