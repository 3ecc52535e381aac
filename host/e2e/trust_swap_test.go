package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The bytes trusted are the bytes run (docs/decisions.md D36): a trusted
// workspace plugin whose file is replaced by rename, again and again, while
// its process is killed, restarts every time from the bytes that were
// checked; the swapped file never executes, not even once after a crash.
func TestSwappedPluginNeverRuns(t *testing.T) {
	w := newWorkspace(t)
	dir := t.TempDir()
	ran, swappedRan := filepath.Join(dir, "ran"), filepath.Join(dir, "swapped-ran")
	path := markerPlugin(t, w, ran, "trusted")
	trustEnv, _ := ownTrustStore(t, path)
	trusted, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	swapped := fmt.Sprintf("#!/bin/sh\necho ran >> %q\nexit 3\n", swappedRan)
	s := w.serve(trustEnv)
	pidOf := func() (int, bool) {
		res := s.call("marker_pid", map[string]any{})
		if res.IsError {
			return 0, false
		}
		return int(structured(t, res)["pid"].(float64)), true
	}
	put := func(content []byte) {
		tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".swap-%d", time.Now().UnixNano()))
		if err := os.WriteFile(tmp, content, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	// Six rounds: each kill soon after a start lengthens the restart
	// backoff, which is the supervisor doing its job, not the test's.
	restartsFromImage := 0
	for round := 0; round < 6; round++ {
		pid, ok := pidOf()
		if !ok {
			// The reload that saw the last swap stopped the plugin; the
			// trusted file is back, so the next reload starts it again.
			eventually(t, 60*time.Second, "the trusted plugin back", func() bool { _, ok := pidOf(); return ok })
			continue
		}
		put([]byte(swapped))
		_ = syscall.Kill(pid, syscall.SIGKILL)
		// A crash restart may come before the reload notices the swap:
		// then it runs the checked image, never the file.
		if np, ok := pidOf(); ok && np != pid {
			restartsFromImage++
		}
		put(trusted)
	}
	if n := ranTimes(swappedRan); n != 0 {
		t.Fatalf("the swapped binary ran %d times", n)
	}
	if ranTimes(ran) == 0 {
		t.Fatal("the trusted plugin never ran")
	}
	t.Logf("6 swaps with kills: %d crash restarts ran the checked image; the swapped file ran 0 times", restartsFromImage)
}
