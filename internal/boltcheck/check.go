package boltcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// CheckInput is what each area's <area>_store_check internal tool takes
// from `cairn store check` and `cairn restore`.
type CheckInput struct {
	From string `json:"from" jsonschema:"minLength=1,description=Absolute path of the data dir (or backup dir) whose store to check"`
}

// Check refuses a relative path.
func (in CheckInput) Check() error {
	if !filepath.IsAbs(in.From) {
		return errs.Invalidf("from", "absolute", "from must be an absolute directory path, got %q", in.From)
	}
	return nil
}

// AreaReport is what one area's check found.
type AreaReport struct {
	Area string `json:"area"`
	// Kind is bbolt, file (the SDD state document) or postgres.
	Kind string `json:"kind"`
	// File is the store checked: a path, or the redacted database URL.
	File string `json:"file"`
	// Found is false when the area never stored anything there.
	Found bool `json:"found"`
	// Live is true when the store was checked inside the process that
	// holds it (on a snapshot taken in one read transaction).
	Live   bool    `json:"live"`
	Layout *Layout `json:"layout,omitempty"`
	// Counts are what verified (tasks, chain links, sessions, records).
	Counts   map[string]int `json:"counts,omitempty"`
	Problems []Problem      `json:"problems"`
}

// CheckFile checks the bbolt file at path as an area's store: Inspect's
// page walk, then (when nothing fatal was found) bbolt's Tx.Check, then
// logical, the area's own checks of its records (which may be nil). The
// file is read under a shared lock: a process writing it makes this fail
// with ErrLocked. A missing file is reported as not found, and as a fatal
// problem when the inventory of its directory lists it: that data dir held
// it (docs/decisions.md D42).
func CheckFile(area, path string, logical func(db *bolt.DB) ([]Problem, map[string]int, error)) (AreaReport, error) {
	rep := AreaReport{Area: area, Kind: "bbolt", File: path, Problems: []Problem{}}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if p, ok, err := MissingHeld(area, filepath.Dir(path), filepath.Base(path)); err != nil {
			return rep, err
		} else if ok {
			rep.Problems = append(rep.Problems, p)
		}
		return rep, nil
	} else if err != nil {
		return rep, err
	}
	rep.Found = true
	lock, err := lockFile(path, false, time.Second)
	if err != nil {
		return rep, err
	}
	defer lock.Close()
	return checkLocked(rep, path, path, logical)
}

// MissingHeld is the problem of a store rel of dataDir that is missing
// while the data dir's inventory lists it (ok false when it is not).
func MissingHeld(area, dataDir, rel string) (p Problem, ok bool, err error) {
	listed, err := heldstores.Listed(dataDir, rel)
	if err != nil || !listed {
		return Problem{}, false, err
	}
	return Problem{Area: area, File: filepath.Join(dataDir, filepath.FromSlash(rel)), Fatal: true,
		Damage: fmt.Sprintf("the file is missing, but %s lists it: this data dir has held it (restore it with `cairn restore <backup dir>`)", filepath.Join(dataDir, heldstores.FileName))}, true, nil
}

// checkLocked checks the file at path, naming it name in the problems.
func checkLocked(rep AreaReport, path, name string, logical func(db *bolt.DB) ([]Problem, map[string]int, error)) (AreaReport, error) {
	lay, problems, err := Inspect(path)
	if err != nil {
		return rep, err
	}
	add := func(ps ...Problem) {
		for _, p := range ps {
			p.Area, p.File = rep.Area, name
			rep.Problems = append(rep.Problems, p)
		}
	}
	add(problems...)
	if len(Fatal(problems)) > 0 {
		return rep, nil
	}
	rep.Layout = &lay
	var db *bolt.DB
	err = Guard(name, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		return err
	})
	if err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			add(d.Problems...)
			return rep, nil
		}
		add(Problem{Damage: fmt.Sprintf("bbolt cannot open it: %v", err), Fatal: true})
		return rep, nil
	}
	defer db.Close()
	add(TxCheck(db)...)
	if logical == nil || len(rep.Problems) > 0 {
		return rep, nil
	}
	var more []Problem
	err = Guard(name, func() error {
		var err error
		more, rep.Counts, err = logical(db)
		return err
	})
	add(more...)
	if err != nil {
		var d *DamagedError
		if errors.As(err, &d) {
			add(d.Problems...)
		} else {
			add(Problem{Damage: err.Error()})
		}
	}
	return rep, nil
}

// pageOf finds the page bbolt's Tx.Check names in its message.
var pageOf = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`page (\d+)`) })

// TxCheck runs bbolt's own consistency check (Tx.Check) in one read
// transaction and returns what it reports.
func TxCheck(db *bolt.DB) []Problem {
	var out []Problem
	_ = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			p := Problem{File: db.Path(), Damage: "bbolt's consistency check: " + err.Error(), Fatal: true}
			if m := pageOf().FindStringSubmatch(err.Error()); m != nil {
				if n, perr := strconv.ParseUint(m[1], 10, 64); perr == nil {
					p.Page = &n
				}
			}
			out = append(out, p)
		}
		return nil
	})
	return out
}

// CheckLive checks a store a process holds open (db): it copies the store
// in one read transaction (Tx.WriteTo) into a temporary file beside it and
// checks that copy as CheckFile would, naming the store's own path.
// logical runs on the copy.
func CheckLive(area string, db *bolt.DB, logical func(db *bolt.DB) ([]Problem, map[string]int, error)) (AreaReport, error) {
	rep := AreaReport{Area: area, Kind: "bbolt", File: db.Path(), Found: true, Live: true, Problems: []Problem{}}
	tmp, err := os.MkdirTemp(filepath.Dir(db.Path()), ".check-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(tmp)
	copyPath := filepath.Join(tmp, filepath.Base(db.Path()))
	if _, err := Snapshot(db, copyPath); err != nil {
		return rep, err
	}
	return checkLocked(rep, copyPath, db.Path(), logical)
}

// Copied describes one file written into a backup.
type Copied struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
	// TxID is the bbolt transaction the copy shows (0 for other files).
	TxID uint64 `json:"txid,omitempty"`
}

// Snapshot writes a consistent copy of db to dst: bbolt's transactional
// copy (Tx.WriteTo) in one read transaction, so writers go on meanwhile
// and the copy shows exactly the commits before it began. It is written
// beside dst, synced and renamed into place.
func Snapshot(db *bolt.DB, dst string) (Copied, error) {
	var out Copied
	err := db.View(func(tx *bolt.Tx) error {
		out.TxID = uint64(tx.ID())
		c, err := WriteFileAtomic(dst, func(w io.Writer) error {
			_, err := tx.WriteTo(w)
			return err
		})
		out.Bytes, out.SHA256 = c.Bytes, c.SHA256
		return err
	})
	return out, err
}

// WriteFileAtomic writes what fill writes into dst through a temporary
// file beside it, synced and renamed into place, and returns its size and
// sha256.
func WriteFileAtomic(dst string, fill func(w io.Writer) error) (Copied, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-")
	if err != nil {
		return Copied{}, err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing there
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	if err := fill(cw); err != nil {
		_ = tmp.Close()
		return Copied{}, err
	}
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return Copied{}, err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return Copied{}, err
	}
	if err := tmp.Close(); err != nil {
		return Copied{}, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return Copied{}, err
	}
	syncDir(filepath.Dir(dst))
	return Copied{Bytes: cw.n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// syncDir makes a rename in dir durable; a failure only weakens that.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
