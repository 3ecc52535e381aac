package heldstores

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func writeFile(t *testing.T, path string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// vanished is Check's *VanishedError, failing the test when it is not one.
func vanished(t *testing.T, dir, rel string) *VanishedError {
	t.Helper()
	err := Check(dir, rel)
	var v *VanishedError
	if !errors.As(err, &v) {
		t.Fatalf("Check(%s): %v, want a vanished store", rel, err)
	}
	if strings.Contains(v.Error(), "\n") {
		t.Errorf("the message is more than one line: %q", v.Error())
	}
	for _, want := range []string{v.Path, "cairn store check", "cairn restore"} {
		if !strings.Contains(v.Error(), want) {
			t.Errorf("the message does not say %q: %s", want, v.Error())
		}
	}
	return v
}

// A store the inventory lists is refused empty and refused missing; the
// message names the file, the inventory and the commands to run.
func TestVanishedStoreRefusedWhenListed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	core := filepath.Join(dir, "core.db")
	writeFile(t, core, "data")
	if err := Record(dir, "core.db"); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, "core.db"); err != nil {
		t.Fatalf("a present store: %v", err)
	}
	if err := os.Truncate(core, 0); err != nil {
		t.Fatal(err)
	}
	v := vanished(t, dir, "core.db")
	if v.Missing || v.Inventory != filepath.Join(dir, FileName) || !strings.Contains(v.Error(), "is empty (0 bytes)") || !strings.Contains(v.Error(), v.Inventory) {
		t.Errorf("empty store: %+v: %s", v, v.Error())
	}
	if err := os.Remove(core); err != nil {
		t.Fatal(err)
	}
	v = vanished(t, dir, "core.db")
	if !v.Missing || !strings.Contains(v.Error(), "is missing") {
		t.Errorf("missing store: %+v: %s", v, v.Error())
	}
	// A store in a subdirectory, named with slashes.
	state := filepath.Join(dir, "state", "sdd-state.json")
	writeFile(t, state, "{}")
	if err := Record(dir, "state/sdd-state.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if v := vanished(t, dir, "state/sdd-state.json"); v.Path != state {
		t.Errorf("path %s, want %s", v.Path, state)
	}
}

// A fresh data dir, and a store left empty where nothing else was ever
// held (a first start that crashed mid-create), start empty.
func TestVanishedStoreFreshDirStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Check(dir, "core.db"); err != nil {
		t.Fatalf("fresh dir: %v", err)
	}
	if err := Check(filepath.Join(dir, "absent"), "core.db"); err != nil {
		t.Fatalf("absent dir: %v", err)
	}
	writeFile(t, filepath.Join(dir, "core.db"), "")
	writeFile(t, filepath.Join(dir, "daemon.log"), "a log line") // not data
	if err := Check(dir, "core.db"); err != nil {
		t.Fatalf("empty store alone: %v", err)
	}
	// A missing store the inventory does not list is new, beside other
	// stores too.
	writeFile(t, filepath.Join(dir, "admin.db"), "data")
	if err := Record(dir, "admin.db"); err != nil {
		t.Fatal(err)
	}
	if err := Check(dir, "state/sdd-state.json"); err != nil {
		t.Fatalf("an unlisted missing store: %v", err)
	}
}

// Without an inventory (a data dir from before it), an empty store beside
// another store, the SDD state or the audit key has vanished.
func TestVanishedStoreRefusedByOtherData(t *testing.T) {
	t.Parallel()
	for _, other := range dataFiles {
		t.Run(strings.ReplaceAll(other, "/", "_"), func(t *testing.T) {
			dir := t.TempDir()
			rel := "core.db"
			if other == rel {
				rel = "admin.db"
			}
			writeFile(t, filepath.Join(dir, filepath.FromSlash(other)), "data")
			writeFile(t, filepath.Join(dir, rel), "")
			v := vanished(t, dir, rel)
			if v.Evidence != filepath.Join(dir, filepath.FromSlash(other)) || v.Inventory != "" || !strings.Contains(v.Error(), v.Evidence) {
				t.Errorf("%+v: %s", v, v.Error())
			}
			// An empty file of its own is no evidence.
			if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(other)), 0); err != nil {
				t.Fatal(err)
			}
			if err := Check(dir, rel); err != nil {
				t.Fatalf("beside an empty %s: %v", other, err)
			}
		})
	}
	// An inventory listing other stores is evidence too.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, FileName), "admin.db\n")
	writeFile(t, filepath.Join(dir, "core.db"), "")
	if v := vanished(t, dir, "core.db"); v.Evidence != filepath.Join(dir, "admin.db") {
		t.Errorf("%+v", v)
	}
}

// Record lists each store once, across concurrent callers (the areas of
// one process, or processes), keeps a line a crash cut short apart, and
// Forget takes one line out.
func TestRecordAndForget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for i := 0; i < 16; i++ {
		for _, rel := range []string{"core.db", "admin.db", fmt.Sprintf("s%d.db", i)} {
			wg.Add(1)
			go func() { defer wg.Done(); errc <- Record(dir, rel) }()
		}
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "#") {
		t.Errorf("no header:\n%s", data)
	}
	for _, rel := range []string{"core.db", "admin.db", "s0.db", "s15.db"} {
		if n := strings.Count(string(data), "\n"+rel+"\n"); n != 1 {
			t.Errorf("%s listed %d times:\n%s", rel, n, data)
		}
	}
	// A line cut short by a crash.
	f, err := os.OpenFile(filepath.Join(dir, FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("adm")
	_ = f.Close()
	if err := Record(dir, "x.db"); err != nil {
		t.Fatal(err)
	}
	if ok, err := Listed(dir, "x.db"); err != nil || !ok {
		t.Fatalf("x.db after a cut line: %v %v", ok, err)
	}
	if err := Forget(dir, "core.db"); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"core.db": false, "admin.db": true, "x.db": true, "s3.db": true} {
		if ok, err := Listed(dir, rel); err != nil || ok != want {
			t.Errorf("Listed(%s) = %v %v, want %v", rel, ok, err, want)
		}
	}
	if _, err := Listed(dir, "../core.db"); err == nil {
		t.Error("a path out of the data dir was accepted")
	}
}
