package boltcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// sample writes a store with a bucket large enough for branch pages, a
// nested bucket and free pages, and returns its path.
func sample(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "core.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for round := 0; round < 3; round++ {
		if err := db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("tasks"))
			if err != nil {
				return err
			}
			for i := 0; i < 400; i++ {
				if err := b.Put([]byte(fmt.Sprintf("task-%05d", i)), bytes.Repeat([]byte{byte(round)}, 100)); err != nil {
					return err
				}
			}
			n, err := b.CreateBucketIfNotExists([]byte("nested"))
			if err != nil {
				return err
			}
			return n.Put([]byte("k"), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// pageOfType finds, through bbolt's own reading of the page headers
// (Tx.Page), the first page of the given type that is in use.
func pageOfType(t *testing.T, path, typ string) (id uint64, pageSize int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil) // Tx.Page needs the freelist loaded
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pageSize = db.Info().PageSize
	free := map[uint64]bool{}
	_ = db.View(func(tx *bolt.Tx) error {
		for i := 2; ; i++ {
			pi, err := tx.Page(i)
			if err != nil || pi == nil {
				break
			}
			if pi.Type == "free" {
				free[uint64(i)] = true
			}
			if pi.Type == typ && id == 0 {
				id = uint64(pi.ID)
			}
			i += pi.OverflowCount
		}
		return nil
	})
	if id == 0 {
		t.Fatalf("no %s page in %s", typ, path)
	}
	return id, pageSize
}

// scribble overwrites n bytes at offset off of page id.
func scribble(t *testing.T, path string, id uint64, pageSize int, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, int64(id)*int64(pageSize)+off); err != nil {
		t.Fatal(err)
	}
}

func TestInspectSoundStore(t *testing.T) {
	t.Parallel()
	path := sample(t)
	lay, problems, err := Inspect(path)
	if err != nil || len(problems) != 0 {
		t.Fatalf("sound store: %v %v", problems, err)
	}
	if lay.Reached < 3 {
		t.Fatalf("walked %d pages, want the root, a branch and its leaves", lay.Reached)
	}
	rep, err := CheckFile("core", path, nil)
	if err != nil || len(rep.Problems) != 0 || !rep.Found {
		t.Fatalf("CheckFile: %+v %v", rep, err)
	}
}

func TestCheckNamesDamagedPages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, typ string
		// corrupt damages the page id of the sample at path.
		corrupt func(t *testing.T, path string, id uint64, ps int)
		want    []string
		fatal   bool
	}{
		{"leaf", "leaf", func(t *testing.T, path string, id uint64, ps int) {
			// The first element's key position far past the page.
			scribble(t, path, id, ps, pageHeaderSize+4, []byte{0xff, 0xff, 0, 0})
		}, []string{"(leaf)", "run past the page"}, true},
		{"branch", "branch", func(t *testing.T, path string, id uint64, ps int) {
			// The page's flags: neither branch nor leaf.
			scribble(t, path, id, ps, 8, []byte{0x40, 0})
		}, []string{"unknown", "branch or leaf page"}, true},
		{"freelist", "freelist", func(t *testing.T, path string, id uint64, ps int) {
			scribble(t, path, id, ps, 8, []byte{leafFlag, 0})
		}, []string{"(freelist)", "has type leaf"}, true},
		{"meta", "meta", func(t *testing.T, path string, _ uint64, ps int) {
			scribble(t, path, 1, ps, metaTxid, []byte{0xde, 0xad})
		}, []string{"page 1 (meta)", "fails its checksum"}, false},
		{"both metas", "meta", func(t *testing.T, path string, _ uint64, ps int) {
			scribble(t, path, 0, ps, metaMagic, []byte{1, 2, 3, 4})
			scribble(t, path, 1, ps, metaMagic, []byte{1, 2, 3, 4})
		}, []string{"both meta pages are invalid"}, true},
		{"truncated", "leaf", func(t *testing.T, path string, _ uint64, ps int) {
			// bbolt grows the file ahead of its pages: cut below what the
			// meta page says is in use (Tx.Size).
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			var used int64
			_ = db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil })
			_ = db.Close()
			if err := os.Truncate(path, used-int64(3*ps)); err != nil {
				t.Fatal(err)
			}
		}, []string{"truncated", "are missing"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := sample(t)
			id, ps := uint64(0), 4096
			if c.typ != "meta" {
				id, ps = pageOfType(t, path, c.typ)
			} else {
				_, ps = pageOfType(t, path, "leaf")
			}
			c.corrupt(t, path, id, ps)
			rep, err := CheckFile("core", path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 {
				t.Fatalf("no problem found in a store with a damaged %s page", c.typ)
			}
			text := rep.Problems[0].String()
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("problem %q does not say %q", text, w)
				}
			}
			if c.typ != "meta" && !strings.Contains(text, fmt.Sprintf("page %d", id)) && c.name != "truncated" {
				t.Errorf("problem %q does not name page %d", text, id)
			}
			_, err = Preflight(path, 0)
			var d *DamagedError
			if got := errors.As(err, &d); got != c.fatal {
				t.Fatalf("Preflight: %v, want fatal %v", err, c.fatal)
			}
			if c.fatal {
				msg := d.Error()
				if strings.Contains(msg, "\n") || !strings.Contains(msg, "cairn store check") || !strings.Contains(msg, "cairn restore") || !strings.Contains(msg, path) {
					t.Errorf("start error %q: want one line naming the file and the commands", msg)
				}
				// Open never hands a damaged file to bbolt.
				if db, _, err := Open(path, 0o600, nil); err == nil {
					_ = db.Close()
					t.Fatal("Open accepted a damaged store")
				}
			}
		})
	}
}

func TestGuardTurnsPanicsIntoDamage(t *testing.T) {
	t.Parallel()
	err := Guard("/x/core.db", func() error { panic("assertion failed: page 9") })
	var d *DamagedError
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "page 9") {
		t.Fatalf("Guard: %v", err)
	}
}

func TestSnapshotUnderWritesAndRestore(t *testing.T) {
	t.Parallel()
	path := sample(t)
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "core.db")
	var c Copied
	// The snapshot's transaction began before this write: it must not
	// show it, and must be consistent.
	if err := db.View(func(tx *bolt.Tx) error {
		done := make(chan error)
		go func() {
			done <- db.Update(func(wtx *bolt.Tx) error { return wtx.Bucket([]byte("tasks")).Put([]byte("late"), []byte("x")) })
		}()
		if err := <-done; err != nil {
			return err
		}
		c.TxID = uint64(tx.ID())
		cc, err := WriteFileAtomic(dst, func(w io.Writer) error { _, err := tx.WriteTo(w); return err })
		c.Bytes, c.SHA256 = cc.Bytes, cc.SHA256
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckFile("core", dst, func(db *bolt.DB) ([]Problem, map[string]int, error) {
		var late []byte
		_ = db.View(func(tx *bolt.Tx) error { late = tx.Bucket([]byte("tasks")).Get([]byte("late")); return nil })
		if late != nil {
			return []Problem{{Damage: "the snapshot shows a write that began after it"}}, nil, nil
		}
		return nil, map[string]int{"ok": 1}, nil
	})
	if err != nil || len(rep.Problems) != 0 || rep.Counts["ok"] != 1 {
		t.Fatalf("snapshot check: %+v %v", rep, err)
	}
	// Restore it over the original, keeping the original beside.
	r, err := RestoreFile(filepath.Dir(dst), filepath.Dir(path), "core.db", true)
	if err != nil || !r.Restored || r.Kept == "" {
		t.Fatalf("RestoreFile: %+v %v", r, err)
	}
	if got, _ := os.ReadFile(path); int64(len(got)) != c.Bytes {
		t.Fatalf("restored %d bytes, copy has %d", len(got), c.Bytes)
	}
	if _, err := os.Stat(r.Kept); err != nil {
		t.Fatalf("the replaced file was not kept: %v", err)
	}
	// A held store is refused.
	held, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := RestoreFile(filepath.Dir(dst), filepath.Dir(path), "core.db", true); err == nil || !strings.Contains(err.Error(), "held by a running cairn") {
		t.Fatalf("restore over a held store: %v", err)
	}
}
