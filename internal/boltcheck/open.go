package boltcheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-mcp/cairn/internal/heldstores"
)

// ErrLocked is returned when another process holds the file.
var ErrLocked = errors.New("the store is held by another process")

// DamagedError is a store that cannot be opened as it is. Its message is
// one line: the file, the damage and what to run.
type DamagedError struct {
	Path     string
	Problems []Problem
	// Vanished is set when the store is missing or empty although its
	// data dir has held it (docs/decisions.md D42); its message is then
	// the error's.
	Vanished *heldstores.VanishedError
}

// Unwrap is the vanished store, if that is the damage.
func (e *DamagedError) Unwrap() error {
	if e.Vanished == nil {
		return nil
	}
	return e.Vanished
}

func (e *DamagedError) Error() string {
	if e.Vanished != nil {
		return e.Vanished.Error()
	}
	var first string
	if len(e.Problems) > 0 {
		first = e.Problems[0].String()
	} else {
		first = e.Path + ": damaged"
	}
	more := ""
	if n := len(e.Problems) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more problem(s))", n)
	}
	// A file moved aside stays listed in the data dir's inventory of held
	// stores (docs/decisions.md D42): starting empty takes its line out too.
	return fmt.Sprintf("store %s is damaged: %s%s; run `cairn store check` for the full report, then `cairn restore <backup dir>` (or, to start empty, move the file aside and delete its line in %s)",
		e.Path, strings.TrimPrefix(first, e.Path+" "), more, filepath.Join(filepath.Dir(e.Path), heldstores.FileName))
}

// lockFile takes bbolt's own lock (flock) on path, shared or exclusive,
// waiting up to timeout, so the file is not read while another process
// writes it. The caller closes the file to release it.
func lockFile(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, err
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, ErrLocked
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Preflight inspects an existing file under an exclusive lock before a
// process opens it for writing: it returns the damage bbolt would crash on
// as a *DamagedError, ErrLocked when another process holds the file, and
// the problems bbolt survives (a damaged meta page it falls back from) as
// warnings. A missing or empty file passes, for bbolt to create, only
// where its data dir (the file's directory) has not held it: a store that
// vanished is a *DamagedError whose Vanished says so (docs/decisions.md
// D42).
func Preflight(path string, timeout time.Duration) (warnings []Problem, err error) {
	_, err = os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, checkHeld(path)
	}
	if err != nil {
		return nil, err
	}
	lock, err := lockFile(path, true, timeout)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	// An empty file is judged under the lock: a process creating the
	// store holds it until bbolt wrote its first pages.
	fi, err := lock.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, checkHeld(path)
	}
	_, problems, err := Inspect(path)
	if err != nil {
		return nil, err
	}
	if fatal := Fatal(problems); len(fatal) > 0 {
		return nil, &DamagedError{Path: path, Problems: fatal}
	}
	return problems, nil
}

// checkHeld is a *DamagedError when the missing or empty store at path is
// one its data dir (the file's directory) has held.
func checkHeld(path string) error {
	err := heldstores.Check(filepath.Dir(path), filepath.Base(path))
	var v *heldstores.VanishedError
	if errors.As(err, &v) {
		return &DamagedError{Path: path, Vanished: v}
	}
	return err
}

// Guard runs fn (which opens or reads a bbolt file) so that bbolt's panics
// on a corrupt page, and memory faults on a page the file lacks, come back
// as a *DamagedError naming path instead of ending the process.
func Guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = &DamagedError{Path: path, Problems: []Problem{{File: path, Damage: fmt.Sprintf("bbolt failed reading it: %v", r), Fatal: true}}}
		}
	}()
	return fn()
}

// Open opens the bbolt file at path for this process after Preflight
// passed it, guarding bbolt's own open. It returns the warnings Preflight
// found.
func Open(path string, mode os.FileMode, opts *bolt.Options) (*bolt.DB, []Problem, error) {
	timeout := time.Second
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	warnings, err := Preflight(path, timeout)
	if err != nil {
		return nil, nil, err
	}
	var db *bolt.DB
	err = Guard(path, func() error {
		var err error
		db, err = bolt.Open(path, mode, opts)
		return err
	})
	return db, warnings, err
}

// OpenReadOnly opens a file no process writes, read-only, after Inspect
// passed it, guarding bbolt's own open.
func OpenReadOnly(path string) (*bolt.DB, []Problem, error) {
	lock, err := lockFile(path, false, time.Second)
	if err != nil {
		return nil, nil, err
	}
	_, problems, err := Inspect(path)
	_ = lock.Close()
	if err != nil {
		return nil, nil, err
	}
	if fatal := Fatal(problems); len(fatal) > 0 {
		return nil, nil, &DamagedError{Path: path, Problems: fatal}
	}
	var db *bolt.DB
	err = Guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		return err
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		err = ErrLocked
	}
	return db, problems, err
}
