package plainfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Refusals of Open and OpenDir beside Check's, for errors.Is.
var (
	ErrSymlink = errors.New("a symlink")
	ErrChanged = errors.New("changed while it was being opened")
)

// Open opens the file name (one path element) of root for reading, and
// only a plain file: a symlink is refused (it may lead anywhere, and even
// one inside the root makes the file someone else's name), and so is
// whatever Check refuses. The name is looked at without following it and
// refused before any open when it is a FIFO or a device, the open itself
// cannot block, and the opened handle is checked again and must be the
// file that was looked at, so nothing swapped in between is read.
func Open(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	before, err := lstatPlain(root, name)
	if err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|OpenNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = Check(fi)
	}
	if err == nil && !os.SameFile(before, fi) {
		err = fmt.Errorf("%w: %s", ErrChanged, name)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenDir opens the directory name (one path element) of root as a root
// of its own, refusing a symlink, anything but a directory, and a
// directory swapped in after it was looked at.
func OpenDir(root *os.Root, name string) (*os.Root, error) {
	before, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if before.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s", ErrSymlink, name)
	}
	if !before.IsDir() {
		return nil, fmt.Errorf("%w: %s is %s", ErrNotRegular, name, Kind(before.Mode()))
	}
	sub, err := root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	after, err := sub.Stat(".")
	if err == nil && !os.SameFile(before, after) {
		err = fmt.Errorf("%w: %s", ErrChanged, name)
	}
	if err != nil {
		_ = sub.Close()
		return nil, err
	}
	return sub, nil
}

// lstatPlain looks at name without following it and refuses a symlink and
// whatever Check refuses.
func lstatPlain(root *os.Root, name string) (fs.FileInfo, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s", ErrSymlink, name)
	}
	if err := Check(fi); err != nil {
		return nil, err
	}
	return fi, nil
}
