package plainfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	linked := filepath.Join(dir, "l")
	if err := os.Link(file, linked); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "g")
	if err := os.WriteFile(plain, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]error{plain: nil, file: ErrHardLinked, linked: ErrHardLinked, fifo: ErrNotRegular, dir: ErrNotRegular} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Check(fi); !errors.Is(got, want) || (want == nil) != (got == nil) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}
