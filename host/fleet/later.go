package fleet

import (
	"context"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/plugins/builtin"
)

// laterAtMost is how long after going live the plugins left for later
// start when nothing asked for them sooner (StartLater).
const laterAtMost = 250 * time.Millisecond

// laterWait bounds how long a stop, a reload or a lookup of a tool waits
// for the plugins started after the first answer: about a start's own
// bound (supervisor's start timeout), with room for the configure.
const laterWait = time.Minute

// later reports whether the plugin of spec s may start after a session
// with toolsets ts is answered: a built-in area (or its replacement, which
// takes its place and its toolsets) that declares its toolsets, none of
// which ts allows. Any other plugin's toolsets are known only once it is
// up, so the session waits for it; so does an explicit CAIRN_TOOLSETS,
// whose names are checked against every plugin's (Catalog.CheckToolsets).
func later(s supervisor.Spec, ts config.Toolsets) bool {
	if ts.Explicit {
		return false
	}
	a, ok := builtin.Lookup(s.Name)
	if !ok || len(a.Toolsets) == 0 {
		return false
	}
	for _, name := range a.Toolsets {
		if ts.Allows(name) {
			return false
		}
	}
	return true
}

// StartLater starts the plugins StartFirst left for later, once the fleet
// is live; it does nothing when none is left. The first tools/list
// answered calls it (host/mcpserver), so that the session's first answers
// do not share the CPU with their start (docs/decisions.md D46); so do a
// lookup of a tool not registered yet (Catalog.Get), a reload and a stop,
// and GoLive's timer (laterAtMost) when nothing did.
func (f *Fleet) StartLater() {
	f.mu.Lock()
	rest := f.laterSpecs
	if !f.live || len(rest) == 0 {
		f.mu.Unlock()
		return
	}
	f.laterSpecs = nil
	f.mu.Unlock()
	go f.startLater(context.Background(), rest)
}

// startLater starts the plugins Start left for later, in parallel, and
// adopts each that starts; then publishes the tools and tells every plugin
// that all are subscribed. A required one that does not start cannot stop
// a host that already serves: it is reported, as an optional one is.
func (f *Fleet) startLater(ctx context.Context, specs []supervisor.Spec) {
	f.mu.Lock()
	done := f.laterDone
	f.mu.Unlock()
	defer close(done)
	started := f.startAll(ctx, specs)
	var adopted []*supervisor.Process
	for _, s := range specs {
		p := started[s.Name]
		if st := p.Status(); !st.State.Started() {
			f.log.Error("plugin failed to start; continuing without it", "plugin", s.Name, "error", st.LastError)
			f.setProblem(s.Name, st.LastError)
			continue
		}
		if err := f.register(p); err != nil {
			f.log.Error("plugin refused at start; continuing without it", "plugin", s.Name, "error", err)
			f.setProblem(s.Name, err.Error())
			p.Stop(ctx)
			continue
		}
		adopted = append(adopted, p)
	}
	f.openAll(ctx, adopted)
	f.listener.ToolsChanged()
	f.publishReady()
}

// Started is closed once every plugin of the start has started or failed,
// those left for later (StartFirst) included; it is closed at once when
// none was left.
func (f *Fleet) Started() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.laterDone
}

// awaitLater waits, within laterWait and ctx, until the plugins left for
// later have started, so that a stop or a reload sees every process.
func (f *Fleet) awaitLater(ctx context.Context) {
	t := time.NewTimer(laterWait)
	defer t.Stop()
	select {
	case <-f.Started():
	case <-ctx.Done():
	case <-t.C:
	}
}
