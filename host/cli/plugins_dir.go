package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/internal/datadir"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/plainfile"
)

// openPluginDir opens the plugin dir that `cairn plugins install` writes
// into, creating what is missing of it. One inside the workspace root
// (the default .cairn/plugins) is walked down from the root one directory
// at a time, and a symlink on the way is refused: it would make the
// command write, trust and have the daemon run a binary outside the root
// (docs/decisions.md D36). A plugin dir outside the root is the
// operator's own (CAIRN_PLUGIN_DIR) and is opened as named.
func openPluginDir(s config.Settings) (*os.Root, error) {
	rel, err := filepath.Rel(filepath.Clean(s.Root), filepath.Clean(s.PluginDir))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		if err := os.MkdirAll(s.PluginDir, 0o755); err != nil {
			return nil, errs.Newf(500, errs.Internal, "cannot create the plugin dir %s: %v", s.PluginDir, err)
		}
		r, err := os.OpenRoot(s.PluginDir)
		if err != nil {
			return nil, errs.Newf(500, errs.Internal, "cannot open the plugin dir %s: %v", s.PluginDir, err)
		}
		return r, nil
	}
	cur, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, errs.Newf(500, errs.Internal, "cannot open the workspace root %s: %v", s.Root, err)
	}
	at := s.Root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if name == "." || name == "" {
			continue
		}
		at = filepath.Join(at, name)
		if _, err := cur.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			err := cur.Mkdir(name, 0o755)
			if err != nil && !errors.Is(err, fs.ErrExist) {
				_ = cur.Close()
				return nil, errs.Newf(500, errs.Internal, "cannot create the plugin dir %s: %v", at, err)
			}
			if err == nil {
				// A .cairn made here is git-ignored (docs/decisions.md D41).
				_ = datadir.MarkCreated(at)
			}
		}
		next, err := plainfile.OpenDir(cur, name)
		_ = cur.Close()
		if err != nil {
			return nil, pluginDirRefused(at, err)
		}
		cur = next
	}
	return cur, nil
}

// pluginDirRefused types why the directory at on the way to the plugin
// dir cannot be written into.
func pluginDirRefused(at string, err error) error {
	switch {
	case errors.Is(err, plainfile.ErrSymlink):
		return errs.Invalidf("plugin_dir", "insideRoot", "%s is a symlink: cairn plugins install writes only into a plugin dir inside the workspace root, with no symlink on the way; make it a directory (or name a plugin dir of your own with CAIRN_PLUGIN_DIR)", at).With("path", at)
	case errors.Is(err, plainfile.ErrNotRegular):
		return errs.Invalidf("plugin_dir", "directory", "%s is not a directory: %v", at, err).With("path", at)
	case errors.Is(err, plainfile.ErrChanged):
		return errs.Invalidf("plugin_dir", "stable", "%s changed while it was being opened; run the command again", at).With("path", at)
	default:
		return errs.Newf(500, errs.Internal, "cannot open %s: %v", at, err)
	}
}
