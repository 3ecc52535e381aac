package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateDBRefusesANameSQLWouldMisread(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "x; DROP DATABASE postgres", "Upper", "1st", strings.Repeat("a", 64)} {
		err := createDB([]string{"-dsn", "postgres://nowhere/postgres", "-name", name})
		if err == nil || !strings.Contains(err.Error(), "-name") {
			t.Errorf("-name %q: got %v, want a refusal naming -name", name, err)
		}
	}
}

func TestKeysAreReadOneALineAndAnEmptyFileIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("ck_one\n\n  ck_two  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readKeys(keys)
	if err != nil || len(got) != 2 || got[0] != "ck_one" || got[1] != "ck_two" {
		t.Fatalf("readKeys = %q, %v", got, err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readKeys(empty); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Fatalf("an empty key file: got %v", err)
	}
}
