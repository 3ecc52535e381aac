package importer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// An import reads only regular files of the folder it is given
// (docs/decisions.md D41): a symlink or a hard-linked file may be a file
// from outside it, a FIFO would block the core area until someone writes
// to it, a device would feed it without end. Each is refused, naming the
// path and why, and opened so that checking it cannot block.

// openPlainFile opens the file at path, which must be a regular file of
// its folder with one link (sdk/plainfile).
func openPlainFile(path string) (*os.File, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, refuseFile(path, err)
	}
	defer func() { _ = root.Close() }()
	f, _, err := plainfile.Open(root, filepath.Base(path))
	if err != nil {
		return nil, refuseFile(path, err)
	}
	return f, nil
}

// refuseFile types why the file at shown cannot be read: field path, and
// the rule it breaks.
func refuseFile(shown string, err error) error {
	w := Where{File: shown}
	switch {
	case errors.Is(err, plainfile.ErrSymlink):
		return Refuse(w, "path", "insideRoot", "%s is a symlink, which may lead outside the folder; an import reads only the folder's own regular files (copy the file in instead)", shown)
	case errors.Is(err, plainfile.ErrHardLinked):
		return Refuse(w, "path", "singleLink", "%s has more than one hard link, so it may be a file from outside the folder; an import reads only files with one link (copy the file instead)", shown)
	case errors.Is(err, plainfile.ErrNotRegular):
		return Refuse(w, "path", "regularFile", "%s is refused (%v): an import reads only regular files, never a FIFO, a device or a socket", shown, err)
	case errors.Is(err, plainfile.ErrChanged):
		return Refuse(w, "path", "stable", "%s changed while it was being opened; run the import again", shown)
	case errors.Is(err, fs.ErrNotExist):
		return Refuse(w, "path", "exists", "%s does not exist", shown)
	default:
		return Refuse(w, "path", "readable", "cannot read %s: %v", shown, err)
	}
}
