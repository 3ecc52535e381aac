package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/buildid"
)

// writeFile writes body to dst with mode (whatever the umask).
func writeFile(t *testing.T, body []byte, dst string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(dst, body, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, mode); err != nil {
		t.Fatal(err)
	}
}

// Built-in areas run from cairn-areas only when it is the one built with
// this cairn and no one else can have changed it; every other case runs
// them from cairn itself, and says why.
func TestAreasExecutableIsTheOneBuiltWithCairn(t *testing.T) {
	t.Parallel()
	// The test binary stands in for cairn-areas: a Go executable with a
	// build ID.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id, err := buildid.Read(exe)
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		want    string
		useArea bool
		why     string
	}{
		{"built together", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
		}, id, true, ""},
		{"cairn built without it", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
		}, "", false, "built without"},
		{"absent", func(t *testing.T, dir string) {}, id, false, "no such file"},
		{"another build", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
		}, id + "x", false, "from another build"},
		{"group may write it", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o775)
		}, id, false, "may be written by others"},
		{"anyone may write it", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o757)
		}, id, false, "may be written by others"},
		{"not executable", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o644)
		}, id, false, "not executable"},
		{"a symbolic link", func(t *testing.T, dir string) {
			other := filepath.Join(t.TempDir(), "elsewhere")
			writeFile(t, body, other, 0o755)
			if err := os.Symlink(other, filepath.Join(dir, AreasBinary)); err != nil {
				t.Fatal(err)
			}
		}, id, false, "not a regular file"},
		{"a directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, AreasBinary), 0o755); err != nil {
				t.Fatal(err)
			}
		}, id, false, "not a regular file"},
		{"not a Go program", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, AreasBinary), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, id, false, "no Go build ID"},
		{"every user may write its folder", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, id, false, "may be written by every user"},
		{"its group may write its folder", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
			if err := os.Chmod(dir, 0o775); err != nil {
				t.Fatal(err)
			}
		}, id, true, ""},
		{"a sticky folder others may write", func(t *testing.T, dir string) {
			writeFile(t, body, filepath.Join(dir, AreasBinary), 0o755)
			if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
		}, id, true, ""},
		{"another owner", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			p := filepath.Join(dir, AreasBinary)
			writeFile(t, body, p, 0o755)
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, id, false, "another owner"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The path as the host sees it, links resolved (a temporary
			// directory may sit behind one).
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			self := filepath.Join(dir, "cairn")
			if err := os.WriteFile(self, []byte("cairn"), 0o755); err != nil {
				t.Fatal(err)
			}
			c.setup(t, dir)
			got, why := areasExecutable(self, c.want)
			if c.useArea {
				// cairn reached through a link finds it beside the file
				// the link names.
				link := filepath.Join(t.TempDir(), "cairn")
				if err := os.Symlink(self, link); err != nil {
					t.Fatal(err)
				}
				if viaLink, _ := areasExecutable(link, c.want); viaLink != got {
					t.Fatalf("through a link to cairn: %s, want %s", viaLink, got)
				}
			}
			wantPath := self
			if c.useArea {
				wantPath = filepath.Join(dir, AreasBinary)
			}
			if got != wantPath {
				t.Fatalf("areasExecutable = %s (%s), want %s", got, why, wantPath)
			}
			if !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Fatalf("reason %q, want one containing %q", why, c.why)
			}
		})
	}
}
