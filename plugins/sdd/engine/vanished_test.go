package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/heldstores"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// initializeErr starts an engine on root's data dir and returns
// Initialize's error.
func initializeErr(t *testing.T, root string) error {
	t.Helper()
	e, err := New(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	_, err = e.Initialize()
	return err
}

// A state file that went empty or missing in a data dir that held it
// fails the start, naming the file and the commands, and is neither set
// aside nor replaced by an empty state (docs/decisions.md D42).
func TestVanishedStoreRefusedSDDState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if f.e.IsPostgres() {
		t.Skip("the state file only")
	}
	if _, err := f.e.SetStateValue("a", 1); err != nil {
		t.Fatal(err)
	}
	path, dataDir := f.e.StatePath(), f.e.DataDir()
	if ok, err := heldstores.Listed(dataDir, StateFile); err != nil || !ok {
		t.Fatalf("the written state is not listed as held: %v %v", ok, err)
	}
	for _, c := range []struct {
		name, says string
		damage     func() error
	}{
		{"empty", "is empty (0 bytes)", func() error { return os.Truncate(path, 0) }},
		{"missing", "is missing", func() error { return os.Remove(path) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.damage(); err != nil {
				t.Fatal(err)
			}
			err := initializeErr(t, f.root)
			e, ok := errs.As(err)
			if !ok || e.Code != errs.InitFailed {
				t.Fatalf("Initialize: %v, want ERR_INIT_FAILED", err)
			}
			for _, want := range []string{path, c.says, "cairn store check", "cairn restore"} {
				if !strings.Contains(e.Message, want) {
					t.Errorf("the refusal does not say %q: %s", want, e.Message)
				}
			}
			names := stateDirEntries(t, filepath.Dir(path))
			if c.name == "empty" && (len(names) != 1 || names[0] != stateFileName) {
				t.Errorf("the empty state was set aside or replaced: %v", names)
			}
			if c.name == "missing" && len(names) != 0 {
				t.Errorf("a state was written: %v", names)
			}
			rep := CheckStateFile(dataDir)
			if len(rep.Problems) == 0 || !rep.Problems[0].Fatal {
				t.Errorf("the check finds nothing wrong: %+v", rep)
			}
		})
	}
}

// An empty state file in a data dir that never held anything is set aside
// as a corrupt one, as before, and the engine starts empty.
func TestVanishedStoreSDDFreshDirStarts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, ".cairn", "data", filepath.FromSlash(StateFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := initializeErr(t, root); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
}
