// Package plainfile holds the rule a plugin applies before reading a file
// from the workspace: a regular file with a single hard link, opened so that
// a FIFO cannot block. A hard-linked file may be a file from outside the
// root; a FIFO or a device would hang or feed a read without end.
package plainfile

import (
	"errors"
	"fmt"
	"io/fs"
)

// Refusals of Check, for errors.Is.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrHardLinked = errors.New("more than one hard link")
)

// Check refuses anything but a regular file with a single link.
func Check(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %s", ErrNotRegular, fi.Name(), Kind(fi.Mode()))
	}
	if n, ok := LinkCount(fi); ok && n > 1 {
		return fmt.Errorf("%w: %s has %d links", ErrHardLinked, fi.Name(), n)
	}
	return nil
}

// Kind names what a file that is not regular is, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}
