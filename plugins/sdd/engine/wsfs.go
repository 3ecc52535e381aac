package engine

import (
	"github.com/cairn-mcp/cairn/sdk/plainfile"

	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"syscall"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Every file the engine reads or writes under the workspace root or the
// data dir goes through an os.Root: each path component is resolved inside
// the directory, symlinks included, so a symlinked .planning or command
// file cannot lead a read, write, rename or remove outside it (a lexical
// check followed by os.Remove could). Paths below are slash-separated and
// relative to the root.

// Refusals of the file rules; fsRefusal turns them into 400 errors.
var (
	// errEscapes marks a path that resolves outside its root.
	errEscapes = errors.New("path resolves outside the workspace root")
	// errNotRegular and errHardLinked are the shared plain-file rule's.
	errNotRegular = plainfile.ErrNotRegular
	errHardLinked = plainfile.ErrHardLinked
	// errTooLarge marks a file over the read limit.
	errTooLarge = errors.New("file is too large")
)

// openRoot opens dir as an os.Root.
func openRoot(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "cannot open %s: %v", dir, err)
	}
	return r, nil
}

// classify maps an os.Root error to errEscapes when the path left the
// root. os.Root reports that with an unexported error, recognised by its
// text; a symlink loop is treated the same way.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return fmt.Errorf("%w: %v", errEscapes, err)
		}
	}
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%w: %v", errEscapes, err)
	}
	return err
}

// readRegular reads rel under r. The file is checked before it is opened:
// it must be a regular file (a FIFO would block the open) with a single
// hard link. It is then opened without blocking and checked again through
// the handle, so a file swapped in between is refused too.
func readRegular(r *os.Root, rel string, limit int64) ([]byte, error) {
	before, err := r.Stat(rel)
	if err != nil {
		return nil, classify(err)
	}
	if err := plainfile.Check(before); err != nil {
		return nil, err
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|plainfile.OpenNonblock, 0)
	if err != nil {
		return nil, classify(err)
	}
	defer f.Close()
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := plainfile.Check(after); err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, fmt.Errorf("%w: %s changed while it was opened", errNotRegular, rel)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", errTooLarge, rel, limit)
	}
	return data, nil
}

// fsRefusal turns a file-rule refusal into a 400 naming field and the rule
// (path, regularFile, singleLink, maxBytes); any other error is returned as
// it is, so callers still see fs.ErrNotExist.
func fsRefusal(field, rel string, err error) error {
	switch {
	case errors.Is(err, errEscapes):
		return errs.Invalidf(field, "path", "%s resolves outside the workspace root (through a symlink); remove the link", rel).With("path", rel)
	case errors.Is(err, errNotRegular):
		return errs.Invalidf(field, "regularFile", "%s is refused: %v; only regular files are read", rel, err).With("path", rel)
	case errors.Is(err, errHardLinked):
		return errs.Invalidf(field, "singleLink", "%s is refused: %v; a hard-linked file may belong outside the workspace, copy it instead", rel, err).With("path", rel)
	case errors.Is(err, errTooLarge):
		return errs.Invalidf(field, "maxBytes", "%v", err).With("path", rel)
	}
	return err
}

// isRefusal reports whether err is one of the file rules.
func isRefusal(err error) bool {
	return errors.Is(err, errEscapes) || errors.Is(err, errNotRegular) || errors.Is(err, errHardLinked) || errors.Is(err, errTooLarge)
}

// testHookBeforeSync lets tests fail a write after the temp file holds
// data, to prove the target survives and the temp file is removed.
var testHookBeforeSync func(f *os.File) error

// writeAtomic replaces rel under r with data: a temp file in the same
// directory is written, fsynced and renamed over the target, then the
// directory is fsynced so the rename itself is durable. On any failure the
// temp file is removed; the target is untouched. Renaming replaces a
// symlink or a hard link at rel rather than writing through it.
func writeAtomic(r *os.Root, rel string, data []byte) (err error) {
	dir := path.Dir(rel)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return classify(err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+path.Base(rel)+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return classify(err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = r.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if testHookBeforeSync != nil {
		if err = testHookBeforeSync(f); err != nil {
			return err
		}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = r.Rename(tmp, rel); err != nil {
		return classify(err)
	}
	return syncDir(r, dir)
}

// syncDir fsyncs a directory; filesystems that cannot (EINVAL, ENOTSUP)
// are tolerated because the rename has already happened.
func syncDir(r *os.Root, dir string) error {
	d, err := r.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}
