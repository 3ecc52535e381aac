package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// `cairn plugins install` writes only into a plugin dir inside the
// workspace root: a symlinked .cairn/plugins, or a symlinked .cairn above
// it, is refused naming the link, and nothing is written, trusted or run
// outside the root (docs/decisions.md D36).
func TestInstallRefusesSymlinkedPluginDir(t *testing.T) {
	src := filepath.Join(t.TempDir(), "cairn-plugin-evil")
	if err := os.WriteFile(src, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{".cairn/plugins", ".cairn"} {
		t.Run(link, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			at := filepath.Join(root, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, at); err != nil {
				t.Fatal(err)
			}
			s := config.Settings{Root: root, PluginDir: filepath.Join(root, ".cairn", "plugins"), DataDir: filepath.Join(t.TempDir(), "data"), TrustFile: filepath.Join(t.TempDir(), "trust.json")}
			err := installPlugin(io.Discard, s, "install", src, "", 0)
			e, ok := errs.As(err)
			if !ok || e.Status != 400 || e.Details["field"] != "plugin_dir" || e.Details["constraint"] != "insideRoot" || e.Details["path"] != at {
				t.Fatalf("want a refusal naming %s, got %v", at, err)
			}
			var left []string
			_ = filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if p != outside {
					left = append(left, p)
				}
				return nil
			})
			if len(left) > 0 {
				t.Fatalf("written outside the root: %v", left)
			}
			if _, err := os.Stat(s.TrustFile); err == nil {
				t.Fatal("the binary was trusted")
			}
		})
	}
	// A plain plugin dir, created as needed, still installs.
	root := t.TempDir()
	s := config.Settings{Root: root, PluginDir: filepath.Join(root, ".cairn", "plugins"), DataDir: filepath.Join(t.TempDir(), "data"), TrustFile: filepath.Join(t.TempDir(), "trust.json")}
	if err := installPlugin(io.Discard, s, "install", src, "", 0); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(s.PluginDir, "cairn-plugin-evil")); err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o755 {
		t.Fatalf("installed binary: %v %v", st, err)
	}
}
