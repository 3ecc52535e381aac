//go:build unix

package imaging

import (
	"image/color"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TestReadFileInRootRefusesSpecialFiles reproduces the escapes once found: a
// FIFO in the root used to block the read forever (it was opened before
// the regular-file check), and a hard link to a file outside the root was
// read like any file. Each is refused with 400 naming the field and the
// rule, and the FIFO refusal must come back at all: a regression fails on
// the deadline instead of hanging the test run.
func TestReadFileInRootRefusesSpecialFiles(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	img := pngBytes(t, solid(4, 4, color.White))
	if err := os.WriteFile(filepath.Join(outside, "secret.png"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.png"), 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	if err := os.Symlink("pipe.png", filepath.Join(root, "link-to-pipe.png")); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(root, "hard.png")
	if err := os.Link(filepath.Join(outside, "secret.png"), hard); err != nil {
		t.Skipf("cannot hard-link across these directories: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "inside.png"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "inside.png"), filepath.Join(root, "inside-twice.png")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, constraint string }{
		{"fifo", "pipe.png", "regularFile"},
		{"symlink to a fifo", "link-to-pipe.png", "regularFile"},
		{"hard link to a file outside", "hard.png", "singleLink"},
		{"hard-linked inside (either name)", "inside.png", "singleLink"},
		{"device outside via absolute path", "/dev/zero", "insideRoot"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, _, err := ReadFileInRoot(root, c.path, 1<<20, "path")
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("ReadFileInRoot(%s) blocked", c.path)
			}
			if err == nil {
				t.Fatalf("read %s: accepted, want 400 path/%s", c.path, c.constraint)
			}
			e := errs.From(err)
			if e.Status != 400 || e.Code != errs.InvalidInput || e.Details["field"] != "path" || e.Details["constraint"] != c.constraint {
				t.Fatalf("read %s: got %v (%v), want 400 path/%s", c.path, err, e.Details, c.constraint)
			}
		})
	}
}
