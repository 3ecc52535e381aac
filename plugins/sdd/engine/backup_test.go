package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckStateData(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, doc, want string
		fatal           bool
	}{
		{"sound", `{"version":1,"project":{"phases":{},"createdAt":"x"}}`, "", false},
		{"truncated", `{"version":1,"project":{"phases":`, "does not parse as JSON", true},
		{"wrong type", `{"version":1,"leases":"none"}`, "does not match its schema", true},
		{"future version", `{"version":7}`, "schema version 7", true},
		{"unknown field", `{"version":1,"extra":true}`, "does not know", false},
	}
	for _, c := range cases {
		ps := CheckStateData([]byte(c.doc))
		if c.want == "" {
			if len(ps) != 0 {
				t.Errorf("%s: %v", c.name, ps)
			}
			continue
		}
		if len(ps) != 1 || !strings.Contains(ps[0].Damage, c.want) || ps[0].Fatal != c.fatal {
			t.Errorf("%s: %+v, want one problem saying %q (fatal %v)", c.name, ps, c.want, c.fatal)
		}
	}
}

func TestBackupStateCopiesTheDocument(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	if _, _, ok, err := BackupState(nil, data, dir); ok || err != nil {
		t.Fatalf("no state: ok %v err %v", ok, err)
	}
	doc := []byte(`{"version":1}`)
	if err := os.MkdirAll(filepath.Join(data, "state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, StateFile), doc, 0o600); err != nil {
		t.Fatal(err)
	}
	n, sum, ok, err := BackupState(nil, data, dir)
	if err != nil || !ok || n != len(doc) || len(sum) != 64 {
		t.Fatalf("BackupState: %d %s %v %v", n, sum, ok, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil || string(got) != string(doc) {
		t.Fatalf("copy %q %v", got, err)
	}
	if rep := CheckStateFile(dir); !rep.Found || len(rep.Problems) != 0 {
		t.Fatalf("check of the copy: %+v", rep)
	}
}
