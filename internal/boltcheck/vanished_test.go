package boltcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/heldstores"
)

// Preflight passes a missing or empty file only where its data dir has not
// held it; a vanished one is a *DamagedError naming the file and the
// commands, and nothing is created.
func TestVanishedStoreRefusedByPreflight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "core.db")
	if _, err := Preflight(path, time.Second); err != nil {
		t.Fatalf("fresh dir: %v", err)
	}
	if err := heldstores.Record(dir, "core.db"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		create bool
		says   string
	}{{"missing", false, "is missing"}, {"empty", true, "is empty (0 bytes)"}} {
		t.Run(c.name, func(t *testing.T) {
			_ = os.Remove(path)
			if c.create {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Preflight(path, time.Second)
			var d *DamagedError
			var v *heldstores.VanishedError
			if !errors.As(err, &d) || !errors.As(err, &v) {
				t.Fatalf("Preflight: %v", err)
			}
			for _, want := range []string{path, c.says, "cairn store check", "cairn restore"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q: %s", want, err)
				}
			}
			fi, err := os.Stat(path)
			if c.create != (err == nil) || err == nil && fi.Size() != 0 {
				t.Errorf("the file changed: %v %v", fi, err)
			}
		})
	}
}

// An empty file another process holds (it is creating the store) is
// reported as held, not as vanished.
func TestEmptyStoreBeingCreatedIsLocked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "core.db")
	if err := os.WriteFile(filepath.Join(dir, "admin.db"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := lockFile(path, true, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := Preflight(path, 50*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("Preflight of a held empty file: %v", err)
	}
}

// `cairn store check` reports a store the inventory lists but the data dir
// lacks; a restore from a backup holding no file for the area takes it out
// of the inventory, so the area starts it empty.
func TestMissingHeldStoreCheckedAndRestoredAway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "core.db")
	rep, err := CheckFile("core", path, nil)
	if err != nil || rep.Found || len(rep.Problems) != 0 {
		t.Fatalf("fresh dir: %+v %v", rep, err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := heldstores.Record(dir, "core.db"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	rep, err = CheckFile("core", path, nil)
	if err != nil || rep.Found || len(rep.Problems) != 1 || !rep.Problems[0].Fatal || !strings.Contains(rep.Problems[0].String(), "missing") {
		t.Fatalf("missing held store: %+v %v", rep, err)
	}
	// The backup has no core.db: the data dir's is set aside (none here)
	// and no longer listed.
	r, err := RestoreFile(t.TempDir(), dir, "core.db", true)
	if err != nil || r.Restored {
		t.Fatalf("RestoreFile: %+v %v", r, err)
	}
	if _, err := Preflight(path, time.Second); err != nil {
		t.Fatalf("after a restore without the file: %v", err)
	}
}
