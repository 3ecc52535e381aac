// Package heldstores keeps the inventory of the stores a data dir has held,
// so that a store that vanished — deleted, or left zero bytes by a crashed
// copy or a full disk — stops the start instead of being recreated empty
// (docs/decisions.md D42). A fresh data dir, which has held nothing, still
// starts empty.
//
// The inventory is a text file in the data dir (FileName), one store per
// line as a slash-separated path relative to the data dir. An area records
// its store once the store was created and synced, and checks it before
// every open. Data dirs written before the inventory are judged by the
// files that show they held data (dataFiles).
//
// It uses the standard library only: the SDD engine, a plain package,
// checks its state file with it too. Stores in PostgreSQL are no files and
// are not covered.
package heldstores

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// FileName is the inventory inside a data dir.
const FileName = "stores"

// header opens a new inventory: the file is read by people too.
const header = "# The stores this data dir has held, one per line. cairn refuses to start\n" +
	"# when one of them is missing or empty; delete a line only to start that\n" +
	"# store empty on purpose.\n"

// dataFiles show that a data dir has held data when it has no inventory
// (one written before the inventory existed): the built-in areas' stores
// (core.db, admin.db, the SDD state) and the audit signing key, as paths
// relative to the data dir. A store left empty beside any of them has
// vanished.
var dataFiles = []string{"core.db", "admin.db", "state/sdd-state.json", "audit-signing.key"}

// VanishedError is a store the data dir has held that is missing or empty.
// Its message is one line: the file, why it counts as held, and the
// commands to run.
type VanishedError struct {
	// Path is the store's file.
	Path string
	// Missing is true when the file is absent, false when it is empty.
	Missing bool
	// Inventory is the inventory listing the store; empty when Evidence
	// says why the data dir has held data.
	Inventory string
	// Evidence is another file of the data dir holding data.
	Evidence string
}

func (e *VanishedError) Error() string {
	state, why, aside := "is empty (0 bytes)", "", ""
	if e.Missing {
		state = "is missing"
	}
	switch {
	case e.Inventory != "" && e.Missing:
		why = "this data dir has held it (" + e.Inventory + " lists it)"
		aside = "delete its line in " + e.Inventory
	case e.Inventory != "":
		why = "this data dir has held it (" + e.Inventory + " lists it)"
		aside = "delete the file and its line in " + e.Inventory
	default:
		why = "this data dir holds other data (" + e.Evidence + ")"
		aside = "delete the file"
	}
	return fmt.Sprintf("store %s %s, but %s: a store that vanished is not recreated empty; run `cairn store check`, then `cairn restore <backup dir>` (to start it empty on purpose, %s)",
		e.Path, state, why, aside)
}

// Check returns a *VanishedError when the store rel (relative to dataDir)
// is missing and the inventory lists it, or is empty and the inventory
// lists it or another file shows the data dir has held data. Any other
// state of the file (present, unreadable) is left to the opener to judge.
func Check(dataDir, rel string) error {
	path, err := join(dataDir, rel)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing || err == nil && fi.Size() > 0 {
		return nil
	}
	names, err := read(dataDir)
	if err != nil {
		return err
	}
	if names[filepath.ToSlash(rel)] {
		return &VanishedError{Path: path, Missing: missing, Inventory: filepath.Join(dataDir, FileName)}
	}
	if missing {
		return nil
	}
	others := make([]string, 0, len(names))
	for name := range names {
		others = append(others, name)
	}
	if len(others) > 0 {
		sort.Strings(others)
		return &VanishedError{Path: path, Evidence: filepath.Join(dataDir, filepath.FromSlash(others[0]))}
	}
	for _, f := range dataFiles {
		if f == filepath.ToSlash(rel) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dataDir, filepath.FromSlash(f))); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return &VanishedError{Path: path, Evidence: filepath.Join(dataDir, filepath.FromSlash(f))}
		}
	}
	return nil
}

// Listed reports whether the inventory of dataDir lists the store rel.
func Listed(dataDir, rel string) (bool, error) {
	if _, err := join(dataDir, rel); err != nil {
		return false, err
	}
	names, err := read(dataDir)
	return names[filepath.ToSlash(rel)], err
}

// Record adds the store rel to the inventory of dataDir, once the store
// exists on disk, and syncs it. It is safe across processes: the inventory
// is appended to under an exclusive lock.
func Record(dataDir, rel string) error {
	if ok, err := Listed(dataDir, rel); err != nil || ok {
		return err
	}
	return locked(dataDir, os.O_RDWR|os.O_CREATE|os.O_APPEND, func(f *os.File, data []byte) error {
		if parse(data)[filepath.ToSlash(rel)] {
			return nil
		}
		var b []byte
		switch {
		case len(data) == 0:
			b = []byte(header)
		case data[len(data)-1] != '\n':
			b = []byte{'\n'} // a line a crash cut short stays a line of its own
		}
		b = append(append(b, filepath.ToSlash(rel)...), '\n')
		if _, err := f.Write(b); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if len(data) == 0 {
			syncDir(dataDir)
		}
		return nil
	})
}

// Forget removes the store rel from the inventory of dataDir: the store
// was set aside on purpose (a restore from a backup that held none), so
// the area starts it empty. The inventory is replaced atomically.
func Forget(dataDir, rel string) error {
	if ok, err := Listed(dataDir, rel); err != nil || !ok {
		return err
	}
	return locked(dataDir, os.O_RDWR, func(_ *os.File, data []byte) error {
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if name, ok := entry(sc.Text()); ok && name == filepath.ToSlash(rel) {
				continue
			}
			out.Write(sc.Bytes())
			out.WriteByte('\n')
		}
		if err := sc.Err(); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(dataDir, "."+FileName+".")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		_, err = tmp.Write(out.Bytes())
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
			return err
		}
		if err := os.Rename(tmp.Name(), filepath.Join(dataDir, FileName)); err != nil {
			return err
		}
		syncDir(dataDir)
		return nil
	})
}

// locked runs fn on the inventory opened with flag, under an exclusive
// lock, with its content. Forget replaces the file, so a lock taken on a
// file no longer at the path is dropped and taken again on the new one.
func locked(dataDir string, flag int, fn func(f *os.File, data []byte) error) error {
	path := filepath.Join(dataDir, FileName)
	for {
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			return fmt.Errorf("store inventory %s: %w", path, err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("lock store inventory %s: %w", path, err)
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && !os.SameFile(held, now) {
			_ = f.Close()
			continue
		}
		data, err := io.ReadAll(f)
		if err == nil {
			err = fn(f, data)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("store inventory %s: %w", path, err)
		}
		return nil
	}
}

// read returns the stores the inventory of dataDir lists; none when it
// does not exist.
func read(dataDir string) (map[string]bool, error) {
	path := filepath.Join(dataDir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the store inventory %s: %w", path, err)
	}
	return parse(data), nil
}

func parse(data []byte) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if name, ok := entry(sc.Text()); ok {
			names[name] = true
		}
	}
	return names
}

// entry is the store a line names; comments and blank lines name none.
func entry(line string) (string, bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", false
	}
	return line, true
}

// join is rel inside dataDir; a path leaving it is refused.
func join(dataDir, rel string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("store %q is not a path inside the data dir", rel)
	}
	return filepath.Join(dataDir, filepath.FromSlash(rel)), nil
}

// syncDir makes a new or renamed entry of dir durable; best effort, as
// some filesystems refuse to sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
