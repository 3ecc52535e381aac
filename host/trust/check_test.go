package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeBin(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestCheckDecisions: trusted by content only; a changed binary, an
// unreadable store or an unreadable binary is untrusted, with the reason
// and the command that trusts it.
func TestCheckDecisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "cairn-plugin-x")
	writeBin(t, bin, "#!/bin/sh\necho v1\n")
	sum, err := SHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "trust.json")
	if err := Update(storePath, func(s *Store) error { return s.Add(sum, Entry{Name: "x", Path: bin}) }); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy")
	writeBin(t, copyPath, "#!/bin/sh\necho v1\n")
	other := filepath.Join(dir, "other")
	writeBin(t, other, "#!/bin/sh\necho other\n")
	store, _ := Load(storePath)

	for _, c := range []struct {
		name   string
		store  *Store
		err    error
		path   string
		ok     bool
		reason string
	}{
		{"trusted", store, nil, bin, true, ""},
		{"same content elsewhere", store, nil, copyPath, true, ""},
		{"unknown binary", store, nil, other, false, "not in the trust store " + storePath},
		{"unreadable binary", store, nil, filepath.Join(dir, "missing"), false, "cannot read the binary"},
		{"no store", nil, errors.New("disk gone"), bin, false, "the trust store cannot be read: disk gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, ok := Check(c.store, c.err, Candidate{Name: "x", Path: c.path, Origin: "plugin dir " + dir})
			if ok != c.ok || !strings.Contains(u.Reason, c.reason) {
				t.Fatalf("ok=%v reason=%q; want %v, %q", ok, u.Reason, c.ok, c.reason)
			}
			if u.Command != "cairn plugins trust "+c.path || u.Origin != "plugin dir "+dir {
				t.Fatalf("command %q origin %q", u.Command, u.Origin)
			}
		})
	}

	// The binary changes: same path, new content: untrusted again, and
	// the reason says it changed.
	writeBin(t, bin, "#!/bin/sh\necho v2 evil\n")
	u, ok := OpenGate(storePath, nil).Admit(Candidate{Name: "x", Path: bin})
	if ok || !strings.Contains(u.Reason, "changed since it was trusted") || u.SHA256 == sum {
		t.Fatalf("changed binary: ok=%v %+v", ok, u)
	}
	if _, ok := OpenGate("", errors.New("no HOME")).Admit(Candidate{Name: "x", Path: copyPath}); ok {
		t.Fatal("a gate without a store trusted a binary")
	}
}

func TestCommandQuotesPaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/r/.cairn/plugins/cairn-plugin-x": "cairn plugins trust /r/.cairn/plugins/cairn-plugin-x",
		"/r/my plugins/x":                  "cairn plugins trust '/r/my plugins/x'",
		"/r/it's/x":                        `cairn plugins trust '/r/it'\''s/x'`,
		"/r/$(rm -rf ~)/x":                 "cairn plugins trust '/r/$(rm -rf ~)/x'",
		"":                                 "cairn plugins trust ''",
	} {
		if got := Command(in); got != want {
			t.Errorf("Command(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSHA256CacheFollowsContent: the cache answers from the stat key, and
// any rewrite (same size included) is hashed again.
func TestSHA256CacheFollowsContent(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bin")
	writeBin(t, p, "aaaa")
	first, err := SHA256(p)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := SHA256(p)
	if again != first {
		t.Fatal("unchanged file hashed differently")
	}
	writeBin(t, p, "bbbb") // same size, rewritten in place
	second, _ := SHA256(p)
	if second == first {
		t.Fatal("a rewritten file kept its cached sha256")
	}
	// A replacement by rename (new inode) is seen too.
	tmp := p + ".new"
	writeBin(t, tmp, "aaaa")
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if third, _ := SHA256(p); third != first {
		t.Fatal("a replaced file kept the old cached sha256")
	}
	if _, err := SHA256(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("hashing a missing file succeeded")
	}
}

func TestStatKeyChangesWithFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "bin")
	writeBin(t, p, "x")
	k1, err := Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if k1.Ino == 0 || k1.Size != 1 {
		t.Fatalf("key %+v", k1)
	}
	writeBin(t, p, "xy")
	k2, _ := Stat(p)
	if k1 == k2 || k1.String() == k2.String() {
		t.Fatal("stat key did not change with the file")
	}
}
