package trust

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

const sumA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestParse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, in string
		wantErr  string
		entries  int
	}{
		{"empty file", "", "", 0},
		{"whitespace", " \n", "", 0},
		{"no plugins", `{"version":1}`, "", 0},
		{"one entry", `{"version":1,"plugins":{"` + sumA + `":{"name":"x","path":"/p","trusted_at":"t"}}}`, "", 1},
		{"wrong version", `{"version":2,"plugins":{}}`, "version 2 is not supported", 0},
		{"missing version", `{"plugins":{}}`, "version 0 is not supported", 0},
		{"uppercase key", `{"version":1,"plugins":{"` + strings.ToUpper(sumA) + `":{}}}`, "not a lowercase hex sha256", 0},
		{"short key", `{"version":1,"plugins":{"abc":{}}}`, "not a lowercase hex sha256", 0},
		{"unknown field", `{"version":1,"plugins":{},"trust_all":true}`, "unknown field", 0},
		{"unknown entry field", `{"version":1,"plugins":{"` + sumA + `":{"any_hash":true}}}`, "unknown field", 0},
		{"trailing data", `{"version":1} {"version":1}`, "unexpected data", 0},
		{"not json", `plugins: []`, "invalid character", 0},
		{"array", `[]`, "cannot unmarshal", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(got) != c.entries {
				t.Fatalf("got %v, %v; want %d entries", got, err, c.entries)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"plugins":{"` + sumA + `":{"name":"x","path":"/p","trusted_at":"t"}}}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses has only well-formed keys, and survives a
		// write and a read unchanged.
		dir := t.TempDir()
		s := &Store{path: filepath.Join(dir, "trust.json"), entries: entries}
		for k := range entries {
			if !sha256Hex.MatchString(k) {
				t.Fatalf("accepted key %q", k)
			}
		}
		if err := s.save(); err != nil {
			t.Fatal(err)
		}
		back, err := Load(s.path)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(back.entries) != fmt.Sprint(entries) {
			t.Fatalf("round trip changed %v into %v", entries, back.entries)
		}
	})
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing, err := Load(filepath.Join(dir, "none.json"))
	if err != nil || missing.Len() != 0 {
		t.Fatalf("missing file: %v, %v", missing, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	e, ok := errs.As(err)
	if !ok || e.Status != 400 || e.Code != errs.ConfigInvalid || !strings.Contains(e.Message, bad) {
		t.Fatalf("malformed store: %v", err)
	}
	if _, err := Load(dir); err == nil { // a directory cannot be read as a file
		t.Fatal("reading a directory as the store succeeded")
	}
}

func TestUpdateWritesAtomicallyWithPrivateMode(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cfg", "cairn", "trust.json")
	err := Update(path, func(s *Store) error { return s.Add(sumA, Entry{Name: "x", Path: "/bin/x"}) })
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("store mode %v, %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", dst.Mode())
	}
	s, err := Load(path)
	if err != nil || !s.Trusts(sumA) {
		t.Fatalf("reload: %v", err)
	}
	e, _ := s.Lookup(sumA)
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", e.TrustedAt); err != nil || e.Name != "x" || e.Path != "/bin/x" {
		t.Fatalf("entry %+v", e)
	}
	// No temporary files are left beside it.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".trust-*"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	// A failing update changes nothing.
	err = Update(path, func(s *Store) error {
		s.Remove(sumA)
		return fmt.Errorf("changed my mind")
	})
	if err == nil {
		t.Fatal("failing update succeeded")
	}
	if s, _ := Load(path); !s.Trusts(sumA) {
		t.Fatal("a failed update was written")
	}
	if err := Update(path, func(s *Store) error { return s.Add("nothex", Entry{}) }); err == nil {
		t.Fatal("a malformed sha256 was accepted")
	}
}

// TestConcurrentUpdatesAllLand: the lock makes read-modify-write safe.
func TestConcurrentUpdatesAllLand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "trust.json")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sum := fmt.Sprintf("%064x", i)
			if err := Update(path, func(s *Store) error { return s.Add(sum, Entry{Name: fmt.Sprint(i)}) }); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	s, err := Load(path)
	if err != nil || s.Len() != 20 {
		t.Fatalf("entries = %d, %v; want 20", s.Len(), err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
		err  bool
	}{
		{"override", map[string]string{"CAIRN_TRUST_FILE": "/etc/cairn/trust.json", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/etc/cairn/trust.json", false},
		{"xdg", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/cairn/trust.json", false},
		{"relative xdg is ignored", map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/cairn/trust.json", false},
		{"home", map[string]string{"HOME": "/h"}, "/h/.config/cairn/trust.json", false},
		{"blank values", map[string]string{"CAIRN_TRUST_FILE": " ", "XDG_CONFIG_HOME": "", "HOME": "/h"}, "/h/.config/cairn/trust.json", false},
		{"nothing", map[string]string{}, "", true},
		{"relative home", map[string]string{"HOME": "h"}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DefaultPath(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
			if c.err {
				e, ok := errs.As(err)
				if !ok || e.Code != errs.ConfigInvalid {
					t.Fatalf("err = %v, want ERR_CONFIG_INVALID", err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
