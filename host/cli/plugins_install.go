package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/daemon"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func init() {
	pluginSubcommands = append(pluginSubcommands, func() *cobra.Command { return newPluginsInstall("install") },
		func() *cobra.Command { return newPluginsInstall("upgrade") })
}

// newPluginsInstall is `cairn plugins install PATH` and `cairn plugins
// upgrade PATH` (docs/decisions.md D36): copy the binary into the workspace
// plugin dir, trust the copy's sha256 on the operator's word, and load it.
// The copy is renamed into place only once trusted, so a running server
// never sees it untrusted; an upgrade keeps the old version serving until
// the new one runs.
func newPluginsInstall(verb string) *cobra.Command {
	var configFile, name string
	var wait time.Duration
	short := "Install a plugin binary into the workspace plugin dir, trusted, and load it"
	if verb == "upgrade" {
		short = "Replace an installed plugin with a new binary, trusted; the old one serves until the new one runs"
	}
	cmd := &cobra.Command{
		Use:   verb + " PATH",
		Short: short,
		Long: short + ".\n\nThe binary is copied (not moved) into the plugin dir as cairn-plugin-NAME, its sha256\n" +
			"is shown and recorded in your trust store, then the copy is renamed into place in one step.\n" +
			"A running cairn daemon of this data dir loads it at once; this command waits until it runs.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, cleanup, err := settings(configFile)
			if err != nil {
				return err
			}
			defer cleanup()
			return installPlugin(cmd.OutOrStdout(), s, verb, args[0], name, wait)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file")
	cmd.Flags().StringVar(&name, "name", "", "plugin name (default: the part of the file name after cairn-plugin-)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for a running daemon to load it")
	return cmd
}

func installPlugin(out io.Writer, s config.Settings, verb, src, name string, wait time.Duration) error {
	if err := checkExecutable(src); err != nil {
		return err
	}
	if name == "" {
		base := filepath.Base(src)
		if !strings.HasPrefix(base, "cairn-plugin-") {
			return errs.Invalidf("name", "required", "%s is not named cairn-plugin-NAME: pass --name", base)
		}
		name = strings.TrimPrefix(base, "cairn-plugin-")
	}
	if !validPluginName(name) {
		return errs.Invalidf("name", "pattern", "plugin name %q must be letters, digits, - and _", name)
	}
	dir, err := openPluginDir(s)
	if err != nil {
		return err
	}
	defer dir.Close()
	file := "cairn-plugin-" + name
	dst := filepath.Join(s.PluginDir, file)
	_, statErr := dir.Lstat(file)
	switch {
	case verb == "upgrade" && statErr != nil:
		return errs.NotFoundf(errs.NotFound, "name", "no plugin %s is installed at %s to upgrade; use `cairn plugins install`", name, dst)
	case verb == "install" && statErr == nil:
		return errs.Conflictf(errs.Conflict, "plugin %s is already installed at %s; use `cairn plugins upgrade %s`", name, dst, src)
	}
	tmp, sum, err := copyHashed(src, dir, name)
	if err != nil {
		return err
	}
	defer dir.Remove(tmp) // gone after the rename; cleans up on failure
	fmt.Fprintf(out, "%s %s from %s\nsha256 %s\n", map[string]string{"install": "installing", "upgrade": "upgrading"}[verb], name, src, sum)
	store, err := s.TrustStorePath()
	if err != nil {
		return err
	}
	if err := trust.Update(store, func(st *trust.Store) error {
		return st.Add(sum, trust.Entry{Name: name, Path: dst})
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "trusted in %s\n", store)
	if err := dir.Rename(tmp, file); err != nil {
		return errs.Newf(500, errs.Internal, "cannot move the copy into place at %s: %v", dst, err)
	}
	fmt.Fprintf(out, "installed %s\n", dst)
	return loadInstalled(out, s, name, sum, wait)
}

// copyHashed copies src into a fresh file of dir, hashing exactly the
// bytes written, and makes it executable; the caller renames it into
// place. The file is created new (O_EXCL), so no symlink or file planted
// under its name is written through; it returns the file's name in dir.
func copyHashed(src string, dir *os.Root, name string) (string, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", "", errs.NotFoundf(errs.NotFound, "path", "cannot read %s: %v", src, err)
	}
	defer in.Close()
	var f *os.File
	var tmp string
	for range 10 {
		tmp = ".cairn-plugin-" + name + ".install-" + rand.Text()[:12]
		if f, err = dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", "", errs.Newf(500, errs.Internal, "cannot write into %s: %v", dir.Name(), err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), in)
	if err == nil {
		err = f.Chmod(0o755)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = dir.Remove(tmp)
		return "", "", errs.Newf(500, errs.Internal, "cannot copy %s: %v", src, err)
	}
	return tmp, hex.EncodeToString(h.Sum(nil)), nil
}

// loadInstalled asks a running daemon to reload and waits until the plugin
// runs the installed bytes; without a daemon the next `cairn serve` starts it.
func loadInstalled(out io.Writer, s config.Settings, name, sum string, wait time.Duration) error {
	p := daemon.PathsFor(s.DataDir)
	if _, err := daemon.Control(p, "reload", 10*time.Second); err != nil {
		fmt.Fprintf(out, "no cairn daemon runs for %s: the next `cairn serve` starts %s\n", s.DataDir, name)
		return nil
	}
	deadline := time.Now().Add(wait)
	last := "not listed yet"
	for {
		w, err := daemon.Control(p, "status", 10*time.Second)
		if err == nil {
			var st DaemonStatus
			if json.Unmarshal(w.Status, &st) == nil {
				for _, pl := range st.Health.Plugins {
					if pl.Name != name {
						continue
					}
					if pl.SHA256 == sum && pl.State == "running" {
						fmt.Fprintf(out, "loaded: %s runs (pid %d, %d tools)\n", name, pl.PID, pl.Tools)
						return nil
					}
					last = pl.State
					if pl.Message != "" {
						last += ": " + pl.Message
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return errs.Newf(500, errs.PluginUnavailable, "the daemon did not load %s within %s (%s); see `cairn status`", name, wait, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func validPluginName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
