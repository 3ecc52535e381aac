package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// refusedVanished opens dataDir's core store and wants the start refused
// with one ERR_INIT_FAILED line naming the file, what happened to it and
// the commands to run.
func refusedVanished(t *testing.T, dataDir, says string) {
	t.Helper()
	path := filepath.Join(dataDir, FileName)
	st, err := OpenFor(dataDir, "")
	if err == nil {
		_ = st.Close()
		t.Fatalf("core.db (%s) was opened as a new store", says)
	}
	e, ok := errs.As(err)
	if !ok || e.Code != errs.InitFailed {
		t.Fatalf("error %v, want ERR_INIT_FAILED", err)
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

// openClose opens dataDir's core store and closes it again.
func openClose(t *testing.T, dataDir string) {
	t.Helper()
	st, err := OpenFor(dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// A core.db that went empty (a crashed copy, a full disk) or missing in a
// data dir that held it fails the start and stays as it was; a fresh data
// dir starts empty and lists core.db as held (docs/decisions.md D42).
func TestVanishedStoreRefusedCoreDB(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, FileName)
	openClose(t, dir)
	if ok, err := heldstores.Listed(dir, FileName); err != nil || !ok {
		t.Fatalf("a fresh store is not listed as held: %v %v", ok, err)
	}

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	refusedVanished(t, dir, "is empty (0 bytes)")
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty core.db was changed: %v %v", fi, err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	refusedVanished(t, dir, "is missing")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the missing core.db was created: %v", err)
	}
}

// A data dir from before the inventory: an empty core.db beside the admin
// store is refused; alone it is a first start that crashed, and starts.
func TestVanishedStoreRefusedCoreDBBesideOtherStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	openClose(t, dir)

	dir = t.TempDir()
	path = filepath.Join(dir, FileName)
	if err := os.WriteFile(filepath.Join(dir, "admin.db"), []byte("admin data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refusedVanished(t, dir, filepath.Join(dir, "admin.db"))
}
