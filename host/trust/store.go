// Package trust is the operator's trust store (docs/decisions.md D23): the sha256
// of every workspace plugin binary the operator agreed to run, kept outside
// any workspace so that a cloned repository cannot trust its own code.
package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// FileVersion is the version of the trust file format.
const FileVersion = 1

// Entry describes one trusted binary. The key is its sha256; name and path
// are where it was trusted, for display and for `untrust PATH`.
type Entry struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	TrustedAt string `json:"trusted_at"`
}

// file is the JSON layout of trust.json.
type file struct {
	Version int              `json:"version"`
	Plugins map[string]Entry `json:"plugins"`
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Store is a loaded trust file.
type Store struct {
	path    string
	entries map[string]Entry
}

// Parse reads the trust file format. It is strict: anything it does not
// understand is an error, because a store that is misread could trust the
// wrong binary.
func Parse(data []byte) (map[string]Entry, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]Entry{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the JSON object")
	}
	if f.Version != FileVersion {
		return nil, fmt.Errorf("version %d is not supported (this cairn reads version %d)", f.Version, FileVersion)
	}
	out := make(map[string]Entry, len(f.Plugins))
	for sum, e := range f.Plugins {
		if !sha256Hex.MatchString(sum) {
			return nil, fmt.Errorf("key %q is not a lowercase hex sha256", sum)
		}
		out[sum] = e
	}
	return out, nil
}

// Load reads the store at path; a missing file is an empty store.
func Load(path string) (*Store, error) {
	s := &Store{path: path, entries: map[string]Entry{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, errs.Newf(400, errs.ConfigInvalid, "trust store %s: %v", path, err)
	}
	if s.entries, err = Parse(data); err != nil {
		return nil, errs.Newf(400, errs.ConfigInvalid, "trust store %s is not valid: %v (fix it, or remove it and trust your plugins again)", path, err)
	}
	return s, nil
}

// Path is the file the store was loaded from.
func (s *Store) Path() string { return s.path }

// Trusts reports whether a binary with this sha256 is trusted.
func (s *Store) Trusts(sum string) bool {
	_, ok := s.entries[sum]
	return ok
}

// Lookup returns the entry of a sha256.
func (s *Store) Lookup(sum string) (Entry, bool) {
	e, ok := s.entries[sum]
	return e, ok
}

// ByPath returns the sha256 keys of entries recorded for path.
func (s *Store) ByPath(path string) []string {
	var out []string
	for sum, e := range s.entries {
		if e.Path == path {
			out = append(out, sum)
		}
	}
	sort.Strings(out)
	return out
}

// Add trusts a binary.
func (s *Store) Add(sum string, e Entry) error {
	if !sha256Hex.MatchString(sum) {
		return fmt.Errorf("%q is not a lowercase hex sha256", sum)
	}
	if e.TrustedAt == "" {
		e.TrustedAt = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	}
	s.entries[sum] = e
	return nil
}

// Remove forgets a binary; it reports whether it was trusted.
func (s *Store) Remove(sum string) bool {
	_, ok := s.entries[sum]
	delete(s.entries, sum)
	return ok
}

// Len is the number of trusted binaries.
func (s *Store) Len() int { return len(s.entries) }

// save writes the store atomically: a temporary file in the same
// directory, synced, renamed over the old one, and the directory synced, so
// a crash leaves the old store or the new one, never half of either.
func (s *Store) save() error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(file{Version: FileVersion, Plugins: s.entries}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".trust-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Update loads the store at path under an exclusive lock, lets f change
// it, and saves it atomically when f succeeds. Two `cairn plugins trust`
// at once both land.
func Update(path string, f func(*Store) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return errs.Newf(500, errs.InitFailed, "trust store %s: %v", path, err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return errs.Newf(500, errs.InitFailed, "trust store %s: %v", path, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return errs.Newf(500, errs.InitFailed, "trust store %s: lock: %v", path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it anyway
	s, err := Load(path)
	if err != nil {
		return err
	}
	if err := f(s); err != nil {
		return err
	}
	if err := s.save(); err != nil {
		return errs.Newf(500, errs.InitFailed, "trust store %s: write: %v", path, err)
	}
	return nil
}

// DefaultPath is where the operator's trust store lives: CAIRN_TRUST_FILE,
// else $XDG_CONFIG_HOME/cairn/trust.json, else ~/.config/cairn/trust.json.
func DefaultPath(env func(string) (string, bool)) (string, error) {
	get := func(k string) string {
		v, _ := env(k)
		return strings.TrimSpace(v)
	}
	if v := get("CAIRN_TRUST_FILE"); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", errs.Newf(400, errs.ConfigInvalid, "CAIRN_TRUST_FILE %q: %v", v, err)
		}
		return abs, nil
	}
	// The XDG spec says a relative XDG_CONFIG_HOME is invalid and ignored.
	if v := get("XDG_CONFIG_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "cairn", "trust.json"), nil
	}
	if home := get("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".config", "cairn", "trust.json"), nil
	}
	return "", errs.New(400, errs.ConfigInvalid, "cannot locate the trust store: set HOME, XDG_CONFIG_HOME or CAIRN_TRUST_FILE")
}
