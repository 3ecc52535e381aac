package fleet

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Specs resolves which plugins to start: the built-in areas (or their
// replacements named in the config file), the config file's other plugins,
// and cairn-plugin-* executables in the plugin directory. Workspace plugins
// the operator has not trusted are left out (docs/decisions.md D23); Untrusted
// lists them.
func (f *Fleet) Specs() ([]supervisor.Spec, error) {
	specs, untrusted, err := f.resolveSpecs(true)
	f.mu.Lock()
	f.untrusted, f.untrustedKnown = untrusted, true
	f.mu.Unlock()
	return specs, err
}

// Untrusted lists the workspace plugins that are not started because the
// sha256 of their binary is not in the operator's trust store, each with
// the command that trusts it. Once Specs has run (start, reload) it is
// what Specs decided, so health and the dashboard do not hash the plugin
// binaries again; before, it resolves them.
func (f *Fleet) Untrusted() []trust.Untrusted {
	f.mu.Lock()
	if f.untrustedKnown {
		defer f.mu.Unlock()
		return append([]trust.Untrusted(nil), f.untrusted...)
	}
	f.mu.Unlock()
	_, out, _ := f.resolveSpecs(false)
	return out
}

// resolveSpecs is Specs, with the untrusted workspace plugins; logged
// says whether to log what it decides.
func (f *Fleet) resolveSpecs(logged bool) ([]supervisor.Spec, []trust.Untrusted, error) {
	if f.cfg.Mode == config.ModeMinimal {
		return nil, nil, nil
	}
	warn := func(msg string, args ...any) {
		if logged {
			f.log.Warn(msg, args...)
		}
	}
	// Code named by the workspace (its plugin dir, its config file) runs
	// only when the operator's trust store holds its sha256.
	gate := trust.OpenGate(f.cfg.TrustStorePath())
	configFromWorkspace, dirFromWorkspace := f.cfg.ConfigFromWorkspace(), f.cfg.PluginDirFromWorkspace()
	var untrusted []trust.Untrusted
	// A required plugin (a built-in area's replacement, or required: true)
	// that is not trusted stops the start with what to do, rather than
	// leaving its area silently missing.
	var refusal error
	admit := func(s *supervisor.Spec, workspace bool, origin string) bool {
		if !workspace {
			return true
		}
		u, ok := gate.Admit(trust.Candidate{Name: s.Name, Path: s.Path, Origin: origin})
		if ok && s.SHA256 == "" {
			// The bytes trusted are the bytes run: the supervisor runs
			// exactly these, at every start and restart (docs/decisions.md
			// D36). A config pin that differs refuses the start.
			s.SHA256 = u.SHA256
		}
		if !ok {
			untrusted = append(untrusted, u)
			warn("workspace plugin not started: the operator has not trusted it", "plugin", s.Name, "path", s.Path, "reason", u.Reason, "trust_with", u.Command)
			if s.Required && refusal == nil {
				refusal = errs.Newf(500, errs.InitFailed, "plugin %s (%s), required by the %s, is not trusted: %s. Review it, then run `%s`, or remove it from that file", s.Name, s.Path, origin, u.Reason, u.Command)
			}
		}
		return ok
	}
	configOrigin, dirOrigin := "config file "+f.cfg.ConfigFile, "plugin dir "+f.cfg.PluginDir

	var specs []supervisor.Spec
	taken := map[string]bool{}
	for _, a := range builtin.All() {
		entry, inFile := f.cfg.File.Plugins[a.Name]
		taken[a.Name] = true
		if inFile && entry.Disabled {
			continue
		}
		if inFile && entry.Path != "" {
			if s := fileSpec(a.Name, entry, true); admit(&s, configFromWorkspace, configOrigin) {
				specs = append(specs, s)
			}
			continue
		}
		s := supervisor.Spec{Name: a.Name, Source: "builtin", Path: f.areasPath(), Args: []string{builtin.ServeArg, a.Name}, Required: true}
		if inFile {
			s.Settings, s.Required = entry.Settings, true
			if len(entry.Env) > 0 && configFromWorkspace {
				// A built-in area keeps the host's environment (its API
				// key); a workspace must not add LD_PRELOAD or a base URL
				// that would send that key elsewhere.
				warn("ignoring env for a built-in area in the workspace config file; set it in a config file outside the workspace (--config or CAIRN_CONFIG)", "area", a.Name, "config", f.cfg.ConfigFile)
			} else {
				s.Env = fileSpec(a.Name, entry, true).Env
			}
		}
		specs = append(specs, s)
	}
	names := make([]string, 0, len(f.cfg.File.Plugins))
	for n := range f.cfg.File.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := f.cfg.File.Plugins[n]
		if taken[n] {
			continue
		}
		taken[n] = true
		if e.Disabled {
			continue
		}
		if e.Path == "" {
			return nil, nil, errs.Newf(400, errs.ConfigInvalid, "config file %s: plugins.%s needs a path to its executable", f.cfg.ConfigFile, n)
		}
		if s := fileSpec(n, e, e.Required); admit(&s, configFromWorkspace, configOrigin) {
			specs = append(specs, s)
		}
	}
	entries, err := os.ReadDir(f.cfg.PluginDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		f.log.Warn("cannot read the plugin directory", "dir", f.cfg.PluginDir, "error", err)
	}
	for _, de := range entries {
		name, ok := strings.CutPrefix(de.Name(), "cairn-plugin-")
		if !ok || name == "" || de.IsDir() {
			continue
		}
		path := filepath.Join(f.cfg.PluginDir, de.Name())
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			warn("skipping plugin that is not an executable file", "path", path)
			continue
		}
		if taken[name] {
			warn("plugin directory entry shadowed by a built-in area or the config file", "path", path, "name", name)
			continue
		}
		taken[name] = true
		if s := (supervisor.Spec{Name: name, Source: "dir", Path: path}); admit(&s, dirFromWorkspace, dirOrigin) {
			specs = append(specs, s)
		}
	}
	return specs, untrusted, refusal
}

func fileSpec(name string, e config.PluginEntry, required bool) supervisor.Spec {
	s := supervisor.Spec{Name: name, Source: "config", Path: e.Path, Args: e.Args, SHA256: e.SHA256, Settings: e.Settings, Required: required}
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+e.Env[k])
	}
	return s
}
