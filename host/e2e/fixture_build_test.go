package e2e

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtFixtures holds, per package, the outcome of building a fixture
// plugin: each is built once per run, on first use.
var builtFixtures sync.Map // package path → func() (string, string)

// buildFixture builds the Go package pkg into binDir as name (once per
// run) and returns its path; a failed build fails t with the compiler's
// output.
func buildFixture(t *testing.T, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(binDir, name)
	once, _ := builtFixtures.LoadOrStore(pkg, sync.OnceValue(func() string {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return err.Error() + "\n" + string(out)
		}
		return ""
	}))
	if msg := once.(func() string)(); msg != "" {
		t.Fatalf("build %s: %s", pkg, msg)
	}
	return bin
}
