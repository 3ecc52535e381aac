package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/internal/trail/bundle/tsatest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TestAnchoredExportAndCheck: an anchored Sigstore export holds one token
// that --tsa-cert verifies; without the flag it is reported unchecked; a
// failing authority fails the export naming the URL (docs/decisions.md D38).
func TestAnchoredExportAndCheck(t *testing.T) {
	dir := t.TempDir()
	signer, vkey, err := bundle.LoadOrCreateKey(filepath.Join(dir, "k"), AuditKeyName)
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle.Bundle{Session: bundle.Session{SessionID: "A-1"}, Root: strings.Repeat("ab", 32)}
	tsa := tsatest.New(t)
	data, err := bundle.AnchoredSigstore(context.Background(), b, signer, vkey, tsa.URL)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := checkTimestamps(data, "")
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "present but unchecked") {
		t.Fatalf("no --tsa-cert: %q, %v", lines, err)
	}
	chain := filepath.Join(dir, "tsa.pem")
	if err := os.WriteFile(chain, tsa.ChainPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err = checkTimestamps(data, chain)
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "timestamp: ") {
		t.Fatalf("--tsa-cert: %q, %v", lines, err)
	}
	t.Log(lines[0])
	other := filepath.Join(dir, "other.pem")
	if err := os.WriteFile(other, tsatest.New(t).ChainPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := checkTimestamps(data, other); err == nil {
		t.Fatal("another authority's chain verified the token")
	}
	if _, err := checkTimestamps(data, filepath.Join(dir, "missing.pem")); err == nil {
		t.Fatal("a missing --tsa-cert file passed")
	}
	tsa.Fail.Store("500")
	_, err = bundle.AnchoredSigstore(context.Background(), b, signer, vkey, tsa.URL)
	if e, ok := errs.As(err); !ok || e.Code != errs.UpstreamFailed || !strings.Contains(e.Message, tsa.URL) {
		t.Fatalf("TSA 500: %v", err)
	}
}
