package datadir

import (
	"os"
	"path/filepath"
	"testing"
)

func readIgnore(t *testing.T, dir string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, IgnoreFile))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func TestMakeIgnoresANewCairnDir(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, CairnDir, "data")
	if err := Make(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, ok := readIgnore(t, filepath.Join(root, CairnDir)); !ok || got != IgnoreContent {
		t.Fatalf(".cairn/.gitignore = %q (exists %v), want %q", got, ok, IgnoreContent)
	}
	if _, ok := readIgnore(t, data); ok {
		t.Fatal("the data dir got a .gitignore of its own although the new .cairn covers it")
	}
}

func TestMakeIgnoresANewDataDirInAnExistingCairnDir(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, CairnDir), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, CairnDir, "data")
	if err := Make(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnore(t, filepath.Join(root, CairnDir)); ok {
		t.Fatal("a .cairn the user made got a .gitignore: it may hold files they commit")
	}
	if got, ok := readIgnore(t, data); !ok || got != IgnoreContent {
		t.Fatalf("data/.gitignore = %q (exists %v)", got, ok)
	}
}

func TestMakeLeavesExistingFoldersAndFilesAlone(t *testing.T) {
	root := t.TempDir()
	cairn := filepath.Join(root, CairnDir)
	if err := os.Mkdir(cairn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Make(cairn, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnore(t, cairn); ok {
		t.Fatal("Make wrote into a folder it did not create")
	}
	own := "data/\n!config.yaml\n"
	if err := os.WriteFile(filepath.Join(cairn, IgnoreFile), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteIgnore(cairn); err != nil {
		t.Fatal(err)
	}
	if got, _ := readIgnore(t, cairn); got != own {
		t.Fatalf("the user's .gitignore was replaced: %q", got)
	}
}

func TestMakeElsewhereIgnoresOnlyTheDataDir(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "share", "cairn")
	if err := Make(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnore(t, filepath.Join(base, "share")); ok {
		t.Fatal("a parent folder that is not .cairn got a .gitignore")
	}
	if _, ok := readIgnore(t, data); !ok {
		t.Fatal("a new data dir outside .cairn got no .gitignore")
	}
}

func TestMarkCreatedOnlyMarksCairnDirs(t *testing.T) {
	root := t.TempDir()
	plugins := filepath.Join(root, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MarkCreated(plugins); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnore(t, plugins); ok {
		t.Fatal("a folder not named .cairn was marked")
	}
	cairn := filepath.Join(root, CairnDir)
	if err := os.Mkdir(cairn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := MarkCreated(cairn); err != nil {
		t.Fatal(err)
	}
	if _, ok := readIgnore(t, cairn); !ok {
		t.Fatal("a new .cairn was not marked")
	}
}
