package plainfile_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// workspace makes a throwaway folder with a file notes.txt and a folder
// docs, and returns it opened as a root.
func workspace() (*os.Root, func()) {
	dir, err := os.MkdirTemp("", "plainfile-example")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o600); err != nil {
		panic(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o700); err != nil {
		panic(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		panic(err)
	}
	return root, func() { _ = root.Close(); _ = os.RemoveAll(dir) }
}

// Open reads a workspace file only when it is a plain file.
func ExampleOpen() {
	root, done := workspace()
	defer done()

	f, fi, err := plainfile.Open(root, "notes.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	fmt.Printf("%s: %q\n", fi.Name(), b)

	_, _, err = plainfile.Open(root, "docs")
	fmt.Println(errors.Is(err, plainfile.ErrNotRegular), err)
	// Output:
	// notes.txt: "remember the milk\n"
	// true not a regular file: docs is a directory
}

// OpenDir descends one folder, as a root of its own.
func ExampleOpenDir() {
	root, done := workspace()
	defer done()

	docs, err := plainfile.OpenDir(root, "docs")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer docs.Close()
	fmt.Println(docs.Name() == filepath.Join(root.Name(), "docs"))

	_, err = plainfile.OpenDir(root, "notes.txt")
	fmt.Println(err)
	// Output:
	// true
	// not a regular file: notes.txt is not a regular file
}

// Check judges what a directory listing says of an entry before the file
// is read.
func ExampleCheck() {
	root, done := workspace()
	defer done()

	entries, _ := fs.ReadDir(root.FS(), ".")
	for _, e := range entries {
		fi, _ := e.Info()
		fmt.Println(e.Name(), plainfile.Check(fi))
	}
	// Output:
	// docs not a regular file: docs is a directory
	// notes.txt <nil>
}

func ExampleKind() {
	fmt.Println(plainfile.Kind(fs.ModeDir | 0o755))
	fmt.Println(plainfile.Kind(fs.ModeNamedPipe | 0o600))
	fmt.Println(plainfile.Kind(fs.ModeSymlink | 0o777))
	// Output:
	// a directory
	// a FIFO
	// a symlink
}
