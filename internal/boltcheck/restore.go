package boltcheck

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// BackupInput is what each area's <area>_store_backup internal tool takes
// from `cairn backup`: where to write (a directory laid out like a data
// dir).
type BackupInput struct {
	To string `json:"to" jsonschema:"minLength=1,description=Absolute path of the backup directory to write the area's files into"`
}

// Check refuses a relative path.
func (in BackupInput) Check() error {
	if !filepath.IsAbs(in.To) {
		return errs.Invalidf("to", "absolute", "to must be an absolute directory path, got %q", in.To)
	}
	return nil
}

// BackedUp is one area's answer to a backup.
type BackedUp struct {
	Area string `json:"area"`
	// Kind is bbolt, file or postgres.
	Kind string `json:"kind"`
	// File is the copy's path relative to the backup dir; empty when the
	// area had nothing stored, or keeps it in PostgreSQL.
	File string `json:"file,omitempty"`
	Copied
	// SchemaVersion is the store's layout version.
	SchemaVersion int `json:"schema_version,omitempty"`
	// Guidance says how to back the area up where no file can be copied
	// (PostgreSQL): the tables to dump.
	Guidance string   `json:"guidance,omitempty"`
	Tables   []string `json:"tables,omitempty"`
}

// RestoreInput is what each area's <area>_store_restore internal tool
// takes from `cairn restore`: the checked backup dir and the data dir.
type RestoreInput struct {
	From string `json:"from" jsonschema:"minLength=1,description=Absolute path of the backup directory (already checked)"`
	To   string `json:"to" jsonschema:"minLength=1,description=Absolute path of the data dir to restore into"`
}

// Check refuses relative paths.
func (in RestoreInput) Check() error {
	if !filepath.IsAbs(in.From) {
		return errs.Invalidf("from", "absolute", "from must be an absolute directory path, got %q", in.From)
	}
	if !filepath.IsAbs(in.To) {
		return errs.Invalidf("to", "absolute", "to must be an absolute directory path, got %q", in.To)
	}
	return nil
}

// Restored is one area's answer to a restore.
type Restored struct {
	Area string `json:"area"`
	File string `json:"file"`
	// Restored is false when the backup held no file for the area (the
	// data dir's file, if any, was set aside so the area starts empty).
	Restored bool  `json:"restored"`
	Bytes    int64 `json:"bytes,omitempty"`
	// Kept is where the file it replaced was kept, if there was one.
	Kept string `json:"kept,omitempty"`
}

// RestoreFile puts the store rel of the backup dir from in place of the
// same file of the data dir to atomically: src is copied beside dst,
// synced and renamed over it, and the file it replaces is kept as
// dst.pre-restore-<time> (a hard link, taken before the rename). When lock
// is true dst is a bbolt file and is held under bbolt's exclusive lock for
// the swap, so a process that holds it (a server running without the
// shared daemon) makes the restore fail instead of writing on into the
// replaced file. A src that does not exist sets dst aside, leaving none,
// and takes rel out of the data dir's inventory of held stores, so the
// area starts it empty (docs/decisions.md D42).
func RestoreFile(from, to, rel string, lock bool) (Restored, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return Restored{}, fmt.Errorf("store %q is not a path inside the data dir", rel)
	}
	src, dst := filepath.Join(from, filepath.FromSlash(rel)), filepath.Join(to, filepath.FromSlash(rel))
	out := Restored{File: dst}
	if _, err := os.Stat(dst); err == nil && lock {
		l, err := lockFile(dst, true, time.Second)
		if errors.Is(err, ErrLocked) {
			return out, errs.Newf(409, errs.Conflict, "%s is held by a running cairn (a server started with --no-daemon, or a command); stop it, then run `cairn restore` again", dst)
		}
		if err != nil {
			return out, err
		}
		defer l.Close()
	}
	in, err := os.Open(src)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, err
	}
	stamp := time.Now().UTC().Format("20060102T150405.000Z")
	keep := func() error {
		if _, err := os.Stat(dst); err != nil {
			return nil
		}
		out.Kept = dst + ".pre-restore-" + stamp
		return os.Link(dst, out.Kept)
	}
	if in == nil {
		if err := keep(); err != nil {
			return out, err
		}
		if out.Kept != "" {
			if err := os.Remove(dst); err != nil {
				return out, err
			}
		}
		return out, heldstores.Forget(to, rel)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return out, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".restore-")
	if err != nil {
		return out, err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return out, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := keep(); err != nil {
		return out, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return out, err
	}
	syncDir(filepath.Dir(dst))
	out.Restored, out.Bytes = true, n
	return out, nil
}
