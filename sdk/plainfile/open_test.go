package plainfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Open reads a plain file and refuses, without blocking, a FIFO, a
// symlink (to a file inside the root or out of it), a hard-linked file and
// a directory; OpenDir refuses a symlinked directory.
func TestOpen(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("plain", "plain")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("plain", filepath.Join(dir, "in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "subout")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	f, fi, err := Open(root, "plain")
	if err != nil || fi.Size() != 5 {
		t.Fatalf("plain file: %v", err)
	}
	if b, _ := io.ReadAll(f); string(b) != "plain" {
		t.Fatalf("read %q", b)
	}
	_ = f.Close()

	for name, want := range map[string]error{"fifo": ErrNotRegular, "out": ErrSymlink, "in": ErrSymlink, "linked": ErrHardLinked, "sub": ErrNotRegular} {
		done := make(chan error, 1)
		go func() {
			f, _, err := Open(root, name)
			if f != nil {
				_ = f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Errorf("%s: %v, want %v", name, err, want)
			}
		case <-time.After(30 * time.Second):
			// Let the blocked open return before failing.
			if w, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = w.Close()
			}
			t.Fatalf("opening %s blocked", name)
		}
	}
	if sub, err := OpenDir(root, "sub"); err != nil {
		t.Fatalf("plain directory: %v", err)
	} else {
		_ = sub.Close()
	}
	if _, err := OpenDir(root, "subout"); !errors.Is(err, ErrSymlink) {
		t.Fatalf("symlinked directory: %v", err)
	}
	if _, err := OpenDir(root, "plain"); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a file as a directory: %v", err)
	}
}
