package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// areaExe is the executable the session's core area runs from.
func areaExe(t *testing.T, s *session) string {
	t.Helper()
	pid := pluginPID(s.cmd.Process.Pid, "core")
	if pid == 0 {
		t.Fatal("no core plugin process under the session")
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// cairnBeside copies the suite's cairn into a folder of its own with areas
// (when not empty) copied beside it as cairn-areas, with mode.
func cairnBeside(t *testing.T, areas string, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "cairn")
	for src, dst := range map[string]string{cairnBin: bin, areas: filepath.Join(dir, "cairn-areas")} {
		if src == "" {
			continue
		}
		if err := copyFile(src, dst); err != nil {
			t.Fatal(err)
		}
		m := os.FileMode(0o755)
		if dst != bin {
			m = mode
		}
		if err := os.Chmod(dst, m); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// The built-in areas run from the cairn-areas built with cairn
// (docs/decisions.md D46); a cairn-areas from another build, one others may
// write, or none at all leaves them running from cairn itself, and every
// tool works either way.
func TestBuiltinAreasRunFromTheAreasBinaryBuiltWithCairn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		bin   func(t *testing.T) string
		areas func(bin string) string
	}{
		{"built together", func(t *testing.T) string { return cairnBin },
			func(string) string { return filepath.Join(binDir, "cairn-areas") }},
		{"copied together", func(t *testing.T) string { return cairnBeside(t, filepath.Join(binDir, "cairn-areas"), 0o755) },
			func(bin string) string { return filepath.Join(filepath.Dir(bin), "cairn-areas") }},
		{"another build beside it", func(t *testing.T) string { return cairnBeside(t, testkitBin, 0o755) },
			func(bin string) string { return bin }},
		{"others may write it", func(t *testing.T) string { return cairnBeside(t, filepath.Join(binDir, "cairn-areas"), 0o777) },
			func(bin string) string { return bin }},
		{"none beside it", func(t *testing.T) string { return cairnBeside(t, "", 0) },
			func(bin string) string { return bin }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			bin := c.bin(t)
			s, err := startSessionOf(w, bin)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.close)
			res := s.call("task_create", map[string]any{"title": "runs from " + c.name})
			if res.IsError {
				t.Fatalf("task_create: %v", res.Content)
			}
			if got, want := areaExe(t, s), c.areas(bin); got != want {
				t.Fatalf("core runs from %s, want %s", got, want)
			}
		})
	}
}
