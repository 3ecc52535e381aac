package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/host/trust"
)

// writeTrustStore writes an operator trust store (docs/decisions.md D23) at path
// that trusts the given binaries, as `cairn plugins trust` would.
func writeTrustStore(path string, bins ...string) error {
	return trust.Update(path, func(s *trust.Store) error {
		for _, b := range bins {
			sum, err := trust.SHA256(b)
			if err != nil {
				return err
			}
			if err := s.Add(sum, trust.Entry{Name: filepath.Base(b), Path: b}); err != nil {
				return err
			}
		}
		return nil
	})
}

// ownTrustStore gives a test its own, empty or pre-filled trust store and
// returns the environment entry that points cairn at it.
func ownTrustStore(t *testing.T, bins ...string) (env, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "cairn", "trust.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeTrustStore(path, bins...); err != nil {
		t.Fatal(err)
	}
	return "CAIRN_TRUST_FILE=" + path, path
}
