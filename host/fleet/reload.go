package fleet

import (
	"context"
	"sort"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/supervisor"
)

// Reload re-reads the config file and restarts the plugins whose binary or
// settings changed, starts new ones and stops removed ones (SIGHUP).
func (f *Fleet) Reload(ctx context.Context) error {
	// A reload compares what runs with the config: the plugins left for
	// later are part of what runs.
	f.StartLater()
	f.awaitLater(ctx)
	file, err := config.LoadFile(f.cfg.ConfigFile, true)
	if err != nil {
		f.log.Error("config reload refused; keeping the running configuration", "error", err)
		return err
	}
	f.mu.Lock()
	f.cfg.File = file
	f.mu.Unlock()
	specs, err := f.Specs()
	if err != nil {
		f.log.Error("config reload refused; keeping the running configuration", "error", err)
		return err
	}
	want := map[string]supervisor.Spec{}
	for _, s := range specs {
		want[s.Name] = s
	}
	f.mu.Lock()
	var stop []*supervisor.Process
	var start []supervisor.Spec
	// A plugin whose binary or settings changed is replaced make before
	// break: the old process serves until the new one runs, so an upgrade
	// never leaves its tools missing (docs/decisions.md D36).
	replacing := map[string]*supervisor.Process{}
	oldSpecs := map[string]supervisor.Spec{}
	for name, p := range f.plugins {
		s, keep := want[name]
		switch {
		case !keep:
			stop = append(stop, p)
			delete(f.plugins, name)
			delete(f.problems, name)
		case s.Fingerprint() != f.fprints[name]:
			replacing[name], oldSpecs[name] = p, f.specs[name]
		}
	}
	for name, s := range want {
		if _, running := f.plugins[name]; !running || replacing[name] != nil {
			start = append(start, s)
		}
	}
	f.mu.Unlock()
	for _, p := range stop {
		f.log.Info("stopping plugin for reload", "plugin", p.Name())
		p.Stop(ctx)
		f.reg.Remove(p.Name())
		f.listener.Dropped(p.Name())
	}
	sort.Slice(start, func(i, j int) bool { return start[i].Name < start[j].Name })
	started := f.startAll(ctx, start)
	var firstErr error
	keepOld := func(name string, p *supervisor.Process, why string) {
		old := replacing[name]
		f.mu.Lock()
		f.plugins[name], f.specs[name], f.fprints[name] = old, oldSpecs[name], oldSpecs[name].Fingerprint()
		f.mu.Unlock()
		f.setProblem(name, "its new version did not start, so the old one keeps serving: "+why)
		f.log.Error("new plugin version refused on reload; the old one keeps serving", "plugin", name, "error", why)
		p.Stop(ctx)
	}
	for _, s := range start {
		p := started[s.Name]
		if !p.Status().State.Started() {
			if replacing[s.Name] != nil {
				keepOld(s.Name, p, p.Status().LastError)
				continue
			}
			f.setProblem(s.Name, p.Status().LastError)
			f.log.Error("plugin failed to start on reload", "plugin", s.Name, "error", p.Status().LastError)
			continue
		}
		if err := f.adopt(ctx, p); err != nil {
			if replacing[s.Name] != nil {
				keepOld(s.Name, p, err.Error())
				continue
			}
			f.log.Error("plugin refused on reload", "plugin", s.Name, "error", err)
			f.setProblem(s.Name, err.Error())
			p.Stop(ctx)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if old := replacing[s.Name]; old != nil {
			// The new version serves now; the old one's calls end with it.
			f.log.Info("plugin replaced on reload", "plugin", s.Name)
			f.mu.Lock()
			delete(f.problems, s.Name)
			f.mu.Unlock()
			old.Stop(ctx)
		}
	}
	f.listener.ToolsChanged()
	f.log.Info("configuration reloaded", "stopped", len(stop), "replaced", len(replacing), "started", len(start)-len(replacing))
	return firstErr
}
