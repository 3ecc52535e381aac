// Package datadir creates cairn's folders so that git leaves them alone: the
// data dir holds the private audit signing key and the stores, which must
// never be committed (docs/decisions.md D41).
package datadir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CairnDir is the name of the workspace folder cairn keeps its files in
// (<root>/.cairn): the data dir, the config file, the plugin dir.
const CairnDir = ".cairn"

// IgnoreFile is the file cairn writes into a folder it creates, and what it
// holds: git ignores everything in the folder, the file included.
const (
	IgnoreFile    = ".gitignore"
	IgnoreContent = "*\n"
)

// Make creates dir and whatever of its parents is missing, with perm. When
// it creates a folder named .cairn on the way, that folder gets a
// .gitignore holding "*"; when it creates dir itself and no new .cairn
// covers it, dir gets one (a data dir inside a .cairn the user made, or
// elsewhere). A .gitignore already there is never replaced.
func Make(dir string, perm fs.FileMode) error {
	created := missing(dir)
	if err := os.MkdirAll(dir, perm); err != nil {
		return err
	}
	for _, c := range created {
		if filepath.Base(c) == CairnDir {
			return WriteIgnore(c)
		}
	}
	if len(created) > 0 && created[len(created)-1] == filepath.Clean(dir) {
		return WriteIgnore(dir)
	}
	return nil
}

// MarkCreated is Make's rule for a folder created by other means (the
// plugin dir is created one checked step at a time): dir was just created.
func MarkCreated(dir string) error {
	if filepath.Base(dir) != CairnDir {
		return nil
	}
	return WriteIgnore(dir)
}

// WriteIgnore writes dir/.gitignore holding "*" unless a file of that name
// exists: one the user wrote is theirs.
func WriteIgnore(dir string) error {
	f, err := os.OpenFile(filepath.Join(dir, IgnoreFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(IgnoreContent)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// missing lists the folders of dir's path that do not exist yet, from the
// top down.
func missing(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append([]string{d}, out...)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return out
}
