package config

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-mcp/cairn/host/trust"
)

// ConfigFromWorkspace reports whether the config file is workspace content
// (docs/decisions.md D23): the default <root>/.cairn/config.yaml, or any file
// inside the root. A file outside the root that the operator named with
// --config or CAIRN_CONFIG is the operator's own, and its plugins run
// without a trust entry.
func (s Settings) ConfigFromWorkspace() bool {
	return !s.ConfigExplicit || Within(s.Root, s.ConfigFile)
}

// PluginDirFromWorkspace reports whether cairn-plugin-* files in the plugin
// dir are workspace content: the default <root>/.cairn/plugins, or any
// directory inside the root.
func (s Settings) PluginDirFromWorkspace() bool {
	return !s.PluginDirExplicit || Within(s.Root, s.PluginDir)
}

// TrustStorePath is the trust store to use, or why there is none.
func (s Settings) TrustStorePath() (string, error) {
	if s.TrustFile != "" {
		return s.TrustFile, nil
	}
	return trust.DefaultPath(os.LookupEnv)
}

// Within reports whether path lies inside root, lexically or once symlinks
// are resolved: when in doubt, it is inside (the stricter answer).
func Within(root, path string) bool {
	if inside(filepath.Clean(root), filepath.Clean(path)) {
		return true
	}
	rr, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rp, err := filepath.EvalSymlinks(path)
	if err != nil {
		// A path that does not exist yet: resolve its directory.
		dir, derr := filepath.EvalSymlinks(filepath.Dir(path))
		if derr != nil {
			return false
		}
		rp = filepath.Join(dir, filepath.Base(path))
	}
	return inside(rr, rp)
}

func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
