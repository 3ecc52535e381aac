package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// wantVanished wants err to be one line of code naming path, what
// happened to it and the commands to run.
func wantVanished(t *testing.T, err error, code, path, says string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
	for _, want := range []string{path, says, "cairn store check", "cairn restore"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the refusal does not say %q: %s", want, e.Message)
		}
	}
	if strings.Contains(e.Message, "\n") {
		t.Errorf("the refusal is more than one line: %q", e.Message)
	}
}

// An admin.db that went empty or missing in a data dir that held it fails
// the start and stays as it was; a fresh data dir starts empty and lists
// admin.db as held (docs/decisions.md D42).
func TestVanishedStoreRefusedAdminDB(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, FileName)
	st, err := OpenFor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if ok, err := heldstores.Listed(dir, FileName); err != nil || !ok {
		t.Fatalf("a fresh store is not listed as held: %v %v", ok, err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = OpenFor(dir, "")
	wantVanished(t, err, errs.InitFailed, path, "is empty (0 bytes)")
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty admin.db was changed: %v %v", fi, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = OpenFor(dir, "")
	wantVanished(t, err, errs.InitFailed, path, "is missing")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the missing admin.db was created: %v", err)
	}
}

// A running store whose file vanished while its handle was released (idle)
// does not open a new empty file at its next operation.
func TestVanishedStoreRefusedAdminDBAfterIdleRelease(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	st, err := OpenFor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.Update(func(tx Tx) error { return put(tx, "k", "v") }); err != nil {
		t.Fatal(err)
	}
	f := st.b.(*boltHandle).f
	released := func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.db == nil }
	for deadline := time.Now().Add(30 * time.Second); !released(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle handle was never released")
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	err = st.View(func(tx Tx) error { return nil })
	wantVanished(t, err, errs.Internal, path, "is missing")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the missing admin.db was created: %v", err)
	}
}
