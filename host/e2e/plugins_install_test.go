package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// `cairn plugins install` and `upgrade` (docs/decisions.md D36): the binary
// is copied, trusted and loaded in one command, and an upgrade under load
// never leaves the plugin's tools missing — the old version serves until
// the new one runs.
func TestPluginInstallAndUpgradeUnderLoad(t *testing.T) {
	w := newWorkspace(t)
	trustEnv, _ := ownTrustStore(t)
	env := append(append([]string{}, sharedEnv...), trustEnv)
	src := t.TempDir()
	version := func(v string) string {
		dir := filepath.Join(src, v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "cairn-plugin-marker")
		script := fmt.Sprintf("#!/bin/sh\necho %s >> %q\nTESTKIT_NAME=marker exec %q\n", v, filepath.Join(src, "started"), testkitBin)
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s := w.serve(env...)
	code, out, errOut := runCairn(t, w, "", env, "plugins", "install", version("v1"))
	if code != 0 || !strings.Contains(out, "sha256 ") || !strings.Contains(out, "loaded: marker runs") {
		t.Fatalf("install: exit %d\n%s\n%s", code, out, errOut)
	}
	if res := s.call("marker_echo", map[string]any{"message": "v1"}); res.IsError {
		t.Fatalf("marker_echo after install: %v", structured(t, res))
	}
	if code, _, errOut := runCairn(t, w, "", env, "plugins", "install", version("v1")); code == 0 || !strings.Contains(errOut, "upgrade") {
		t.Fatalf("a second install of the same name: exit %d %s; want a refusal naming upgrade", code, errOut)
	}

	var calls, failures atomic.Int64
	var mu sync.Mutex
	var reasons []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				calls.Add(1)
				res, err := s.callCtx(t.Context(), "marker_echo", map[string]any{"message": "load"})
				if err != nil || res.IsError {
					failures.Add(1)
					mu.Lock()
					if err != nil {
						reasons = append(reasons, err.Error())
					} else {
						reasons = append(reasons, fmt.Sprint(res.StructuredContent))
					}
					mu.Unlock()
				}
			}
		}()
	}
	code, out, errOut = runCairn(t, w, "", env, "plugins", "upgrade", version("v2"))
	close(stop)
	wg.Wait()
	if code != 0 || !strings.Contains(out, "loaded: marker runs") {
		t.Fatalf("upgrade: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, r := range reasons {
		if strings.Contains(r, "not found") || strings.Contains(r, "no tool") {
			t.Errorf("a call during the upgrade found no tool: %s", r)
		}
	}
	started, _ := os.ReadFile(filepath.Join(src, "started"))
	if !strings.Contains(string(started), "v2") {
		t.Fatalf("the upgraded version never started: %q", started)
	}
	t.Logf("%d calls during the upgrade, %d failed (%v)", calls.Load(), failures.Load(), reasons)

	// Replaced by hand (mv) with a binary nobody trusted: the daemon stops
	// it, and `cairn status` says so with the command that trusts it.
	if err := os.Rename(version("v3"), filepath.Join(w.root, ".cairn", "plugins", "cairn-plugin-marker")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "cairn status naming the untrusted plugin and its fix", func() bool {
		_, out, _ := runCairn(t, w, "", env, "status")
		return strings.Contains(out, "untrusted") && strings.Contains(out, "cairn plugins trust ")
	})
}
