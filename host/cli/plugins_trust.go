package cli

import (
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

// pluginSubcommands are attached to `cairn plugins` by newPlugins.
var pluginSubcommands = []func() *cobra.Command{newPluginsTrust, newPluginsUntrust}

// newPluginsTrust is `cairn plugins trust NAME|PATH` (docs/decisions.md D23).
func newPluginsTrust() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "trust NAME|PATH",
		Short: "Allow a workspace plugin binary to run (records its sha256 in your trust store)",
		Long: "Records the sha256 of a workspace plugin's binary in the operator's trust store\n" +
			"($XDG_CONFIG_HOME/cairn/trust.json, else ~/.config/cairn/trust.json; CAIRN_TRUST_FILE overrides).\n" +
			"NAME is a plugin `cairn plugins` lists; PATH is its executable. A binary that changes\n" +
			"afterwards is untrusted again until you trust the new one.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, target, err := resolveTrustTarget(configFile, args[0], true)
			if err != nil {
				return err
			}
			return trustPlugin(cmd.OutOrStdout(), s, target)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file (to find a plugin by name)")
	return cmd
}

// newPluginsUntrust is `cairn plugins untrust NAME|PATH`.
func newPluginsUntrust() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "untrust NAME|PATH",
		Short: "Stop a workspace plugin binary from running (removes it from your trust store)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, target, err := resolveTrustTarget(configFile, args[0], false)
			if err != nil {
				return err
			}
			return untrustPlugin(cmd.OutOrStdout(), s, target)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config file (to find a plugin by name)")
	return cmd
}

// trustTarget is the binary a trust command acts on.
type trustTarget struct {
	Name, Path string
}

// resolveTrustTarget reads arg as a path when it names a file or holds a
// path separator, otherwise as the name of a workspace plugin.
func resolveTrustTarget(configFile, arg string, mustExist bool) (config.Settings, trustTarget, error) {
	s, cleanup, err := settings(configFile)
	if err != nil {
		return s, trustTarget{}, err
	}
	defer cleanup()
	if strings.ContainsRune(arg, os.PathSeparator) || fileExists(arg) {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return s, trustTarget{}, errs.Invalidf("path", "path", "%s: %v", arg, err)
		}
		if mustExist {
			if err := checkExecutable(abs); err != nil {
				return s, trustTarget{}, err
			}
		}
		name := strings.TrimPrefix(filepath.Base(abs), "cairn-plugin-")
		return s, trustTarget{Name: name, Path: abs}, nil
	}
	h, err := newHost(s)
	if err != nil {
		return s, trustTarget{}, err
	}
	for _, u := range h.Fleet.Untrusted() {
		if u.Name == arg {
			return s, trustTarget{Name: u.Name, Path: u.Path}, nil
		}
	}
	specs, err := h.Fleet.Specs()
	if err != nil {
		return s, trustTarget{}, err
	}
	for _, sp := range specs {
		if sp.Name != arg {
			continue
		}
		if sp.Builtin() {
			return s, trustTarget{}, errs.Invalidf("name", "workspace_plugin", "%s is a built-in area: it is part of cairn and always trusted", arg)
		}
		return s, trustTarget{Name: sp.Name, Path: sp.Path}, nil
	}
	return s, trustTarget{}, errs.NotFoundf(errs.NotFound, "name", "no plugin named %q in this workspace (%s); run `cairn plugins` to list them, or pass the path of the executable", arg, s.Root)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func checkExecutable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.NotFoundf(errs.NotFound, "path", "no plugin executable at %s: give the path of a built cairn-plugin-* binary", path)
	case err != nil:
		return errs.NotFoundf(errs.NotFound, "path", "cannot read %s: %v", path, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return errs.Invalidf("path", "executable", "%s is not an executable file", path)
	}
	return nil
}

func trustPlugin(out io.Writer, s config.Settings, t trustTarget) error {
	store, err := s.TrustStorePath()
	if err != nil {
		return err
	}
	sum, err := trust.SHA256(t.Path)
	if err != nil {
		return errs.NotFoundf(errs.NotFound, "path", "cannot read %s: %v", t.Path, err)
	}
	err = trust.Update(store, func(st *trust.Store) error {
		return st.Add(sum, trust.Entry{Name: t.Name, Path: t.Path})
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trusted %s (%s)\nsha256 %s\nstore  %s\n", t.Name, t.Path, sum, store)
	if reloadDaemon(s) {
		fmt.Fprintf(out, "The running cairn daemon of this data dir reloads and starts it (`cairn plugins` shows it).\n")
		return nil
	}
	fmt.Fprintf(out, "It starts with the next `cairn serve` (a server without the daemon picks it up on SIGHUP).\n")
	return nil
}

func untrustPlugin(out io.Writer, s config.Settings, t trustTarget) error {
	store, err := s.TrustStorePath()
	if err != nil {
		return err
	}
	// Remove the binary's current content and anything trusted at its
	// path before, so a binary that changed or vanished can be untrusted.
	sum, sumErr := trust.SHA256(t.Path)
	removed := 0
	err = trust.Update(store, func(st *trust.Store) error {
		if sumErr == nil && st.Remove(sum) {
			removed++
		}
		for _, old := range st.ByPath(t.Path) {
			if st.Remove(old) {
				removed++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if removed == 0 {
		if sumErr != nil && !errors.Is(sumErr, os.ErrNotExist) {
			return errs.NotFoundf(errs.NotFound, "path", "cannot read %s: %v", t.Path, sumErr)
		}
		fmt.Fprintf(out, "%s (%s) was not trusted; nothing to do\n", t.Name, t.Path)
		return nil
	}
	fmt.Fprintf(out, "untrusted %s (%s): %d trust entr%s removed from %s\n", t.Name, t.Path, removed, plural(removed, "y", "ies"), store)
	if reloadDaemon(s) {
		fmt.Fprintf(out, "The running cairn daemon of this data dir reloads and stops it.\n")
		return nil
	}
	fmt.Fprintf(out, "A server without the daemon stops it on SIGHUP.\n")
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// trustColumn is the TRUST column of `cairn plugins` for a started plugin:
// built-in areas are part of cairn; anything else that runs was trusted or
// came from the operator's own config.
func trustColumn(source string) string {
	if source == "builtin" {
		return "builtin"
	}
	return "trusted"
}

func untrustedSource(u trust.Untrusted) string {
	if strings.HasPrefix(u.Origin, "plugin dir ") {
		return "dir"
	}
	return "config"
}

// reloadDaemon asks the daemon serving the data dir, if one does, to
// reload, so a change of trust takes effect while agents stay connected;
// it reports whether a daemon took the request.
func reloadDaemon(s config.Settings) bool {
	p := daemon.PathsFor(s.DataDir)
	if s.TempDataDir || !daemonListens(p) {
		return false
	}
	_, err := daemon.Control(p, "reload", 10*time.Second)
	return err == nil
}
