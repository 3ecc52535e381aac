package supervisor

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestFingerprintFollowsBinaryAndSpec: the stat-based fingerprint is
// stable while nothing changes and moves when the binary or the spec does.
func TestFingerprintFollowsBinaryAndSpec(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cairn-plugin-x")
	if err := os.WriteFile(bin, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Spec{Name: "x", Source: "dir", Path: bin}
	first := s.Fingerprint()
	if s.Fingerprint() != first {
		t.Fatal("fingerprint of an unchanged spec moved")
	}
	for name, changed := range map[string]Spec{
		"args":     {Name: "x", Source: "dir", Path: bin, Args: []string{"-v"}},
		"env":      {Name: "x", Source: "dir", Path: bin, Env: []string{"A=1"}},
		"pin":      {Name: "x", Source: "dir", Path: bin, SHA256: "00"},
		"settings": {Name: "x", Source: "dir", Path: bin, Settings: map[string]string{"a": "b"}},
		"source":   {Name: "x", Source: "config", Path: bin},
		"required": {Name: "x", Source: "dir", Path: bin, Required: true},
	} {
		if changed.Fingerprint() == first {
			t.Errorf("changing %s kept the fingerprint", name)
		}
	}
	if err := os.WriteFile(bin, []byte("v2"), 0o755); err != nil { // same size, rewritten
		t.Fatal(err)
	}
	if s.Fingerprint() == first {
		t.Fatal("a rewritten binary kept its fingerprint")
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if s.Fingerprint() == first {
		t.Fatal("a removed binary kept its fingerprint")
	}
}

// BenchmarkFingerprint is what a start or reload pays per plugin now.
func BenchmarkFingerprint(b *testing.B) {
	s := Spec{Name: "testkit", Source: "builtin", Path: testkitBin, Args: []string{"__serve-plugin", "core"}}
	for b.Loop() {
		_ = s.Fingerprint()
	}
}

// BenchmarkFingerprintByContent is what it paid before: the executable
// hashed whole, once per plugin.
func BenchmarkFingerprintByContent(b *testing.B) {
	st, err := os.Stat(testkitBin)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		f, err := os.Open(testkitBin)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
