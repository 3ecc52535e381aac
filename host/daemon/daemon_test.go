package daemon

import (
	"os"
	"strings"
	"testing"
)

func TestPathsForLongDataDirMovesTheSocket(t *testing.T) {
	t.Parallel()
	p := PathsFor("/tmp/" + strings.Repeat("d", 120))
	if len(p.Socket) > maxSocketPath || !strings.HasPrefix(p.Socket, os.TempDir()) {
		t.Errorf("socket %q", p.Socket)
	}
	if q := PathsFor("/tmp/" + strings.Repeat("d", 120)); q.Socket != p.Socket {
		t.Errorf("socket path not stable: %q %q", p.Socket, q.Socket)
	}
}

func TestStoppedOnPurpose(t *testing.T) {
	t.Parallel()
	p := PathsFor(t.TempDir())
	if StoppedOnPurpose(p, os.Getpid()) {
		t.Fatal("stopped before any marker")
	}
	markStopped(p)
	if !StoppedOnPurpose(p, os.Getpid()) {
		t.Error("marker of this pid not seen")
	}
	if StoppedOnPurpose(p, os.Getpid()+1) || StoppedOnPurpose(p, 0) {
		t.Error("another daemon's marker taken for this one")
	}
	_ = os.WriteFile(p.Stopped, []byte("garbage"), 0o600)
	if StoppedOnPurpose(p, os.Getpid()) {
		t.Error("garbage marker accepted")
	}
}

func TestSessionKeysAreUnique(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		k := newSessionKey()
		if len(k) != 24 || seen[k] {
			t.Fatalf("key %q (seen %v)", k, seen[k])
		}
		seen[k] = true
	}
}
