package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Prefix is the fixed prefix of a skill directory (D1, D14) and Dir the
// skills directory relative to the workspace root: the layout Install
// writes and the core area's skill registry reads.
const (
	Prefix = "cairn-"
	Dir    = ".agents/skills"
)

// InstallReport says what Install did with each file. Paths are
// repo-relative with forward slashes (".agents/skills/<dir>/<file>").
type InstallReport struct {
	// Installed files did not exist and were created.
	Installed []string `json:"installed"`
	// Unchanged files already had the shipped content.
	Unchanged []string `json:"unchanged"`
	// Kept files exist with different content (a local edit) and were left
	// alone.
	Kept []string `json:"kept"`
}

// String summarises the counts, e.g. "installed 24, unchanged 0, kept 0".
func (r InstallReport) String() string {
	return fmt.Sprintf("installed %d, unchanged %d, kept %d", len(r.Installed), len(r.Unchanged), len(r.Kept))
}

// Install copies every file under the cairn-* directories of src into
// <root>/.agents/skills, for `cairn init`. It creates missing files and never
// overwrites an existing one: a file whose content differs is reported as
// kept, because it is most likely a local edit. Running it twice is safe.
func Install(src fs.FS, root string) (InstallReport, error) {
	rep := InstallReport{Installed: []string{}, Unchanged: []string{}, Kept: []string{}}
	dest := filepath.Join(root, filepath.FromSlash(Dir))
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		top, _, _ := strings.Cut(p, "/")
		if !strings.HasPrefix(top, Prefix) || len(top) == len(Prefix) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		rel := path.Join(Dir, p)
		state, err := installFile(filepath.Join(dest, filepath.FromSlash(p)), data)
		if err != nil {
			return fmt.Errorf("install %s: %w", rel, err)
		}
		switch state {
		case installed:
			rep.Installed = append(rep.Installed, rel)
		case unchanged:
			rep.Unchanged = append(rep.Unchanged, rel)
		default:
			rep.Kept = append(rep.Kept, rel)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("skills: %w", err)
	}
	return rep, nil
}

type installState int

const (
	installed installState = iota
	unchanged
	kept
)

func installFile(target string, data []byte) (installState, error) {
	cur, err := os.ReadFile(target)
	switch {
	case err == nil:
		if bytes.Equal(cur, data) {
			return unchanged, nil
		}
		return kept, nil
	case !errors.Is(err, os.ErrNotExist):
		return 0, err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	// Write a temporary file and link it into place: the skill watcher never
	// sees a half-written SKILL.md, and link fails instead of replacing a
	// file someone created meanwhile.
	tmp, err := os.CreateTemp(dir, ".cairn-install-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	if err := os.Link(tmp.Name(), target); err != nil {
		if errors.Is(err, os.ErrExist) {
			return kept, nil
		}
		// Some file systems have no hard links; fall back to an exclusive
		// create, which still never overwrites.
		return createExclusive(target, data)
	}
	return installed, nil
}

func createExclusive(target string, data []byte) (installState, error) {
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return kept, nil
		}
		return 0, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(target)
		return 0, err
	}
	return installed, f.Close()
}
