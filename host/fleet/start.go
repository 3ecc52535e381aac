package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Start launches every plugin in parallel and registers their tools. A
// required plugin that cannot start, or two plugins claiming one tool name,
// is an ERR_INIT_FAILED error, and the caller shuts the host down; an
// optional plugin that fails is reported in server_health and `cairn
// plugins`. GoLive then publishes what started.
func (f *Fleet) Start(ctx context.Context) error {
	return f.start(ctx, func(supervisor.Spec) bool { return false })
}

// StartFirst is Start for a host that serves one session with toolsets ts
// (stdio): it returns once the plugins that session may need have
// started, and GoLive starts the others, the built-in areas none of whose
// toolsets ts allows. The session is answered meanwhile; their tools
// arrive with tools/list_changed, and durable events wait until every
// plugin has subscribed (docs/decisions.md D46).
func (f *Fleet) StartFirst(ctx context.Context, ts config.Toolsets) error {
	return f.start(ctx, func(s supervisor.Spec) bool { return later(s, ts) })
}

func (f *Fleet) start(ctx context.Context, isLater func(supervisor.Spec) bool) error {
	all, err := f.Specs()
	if err != nil {
		return err
	}
	var specs, rest []supervisor.Spec
	for _, s := range all {
		if isLater(s) {
			rest = append(rest, s)
		} else {
			specs = append(specs, s)
		}
	}
	started := f.startAll(ctx, specs)
	var adopted []*supervisor.Process
	for _, s := range specs {
		p := started[s.Name]
		st := p.Status()
		// A plugin still opening counts as started: its calls wait for
		// it (docs/decisions.md D34).
		if !st.State.Started() {
			if s.Required {
				// A plugin's own ERR_INIT_FAILED says it once, not twice.
				return errs.Newf(500, errs.InitFailed, "%s", strings.Replace(st.LastError, ": "+errs.InitFailed+": ", ": ", 1))
			}
			f.log.Error("plugin failed to start; continuing without it", "plugin", s.Name, "error", st.LastError)
			f.setProblem(s.Name, st.LastError)
			continue
		}
		if err := f.register(p); err != nil {
			return errs.Newf(500, errs.InitFailed, "%v", err)
		}
		adopted = append(adopted, p)
	}
	f.openAll(ctx, adopted)
	// Only a start that succeeded leaves plugins for GoLive: after a
	// failed one the host stops, and nothing is left to wait for.
	if len(rest) > 0 {
		f.mu.Lock()
		f.laterSpecs, f.laterDone = rest, make(chan struct{})
		f.mu.Unlock()
	}
	return nil
}

// GoLive marks the fleet live (a plugin that fails from now on takes its
// tools with it), publishes the tools and tells every plugin that all are
// subscribed; after StartFirst, that is told once the plugins left for
// later are up (StartLater).
func (f *Fleet) GoLive() {
	f.mu.Lock()
	f.live = true
	pending := len(f.laterSpecs) > 0
	f.mu.Unlock()
	f.listener.ToolsChanged()
	if pending {
		time.AfterFunc(laterAtMost, f.StartLater)
		return
	}
	f.publishReady()
}

func (f *Fleet) supervisorEnv() supervisor.Env {
	cfg := f.cfg
	extra := []string{
		"CAIRN_ROOT=" + cfg.Root,
		"CAIRN_DATA_DIR=" + cfg.DataDir,
		"CAIRN_MODE=" + cfg.Mode,
		"CAIRN_ENV=" + cfg.Env,
		"CAIRN_LOG_LEVEL=" + cfg.LogLevel,
		// Always set, so a CAIRN_PROJECT the host ignored (not a slug)
		// never reaches a plugin through the inherited environment.
		"CAIRN_PROJECT=" + cfg.Project,
	}
	if cfg.AuditKeyFile != "" {
		extra = append(extra, bundle.KeyFileEnv+"="+cfg.AuditKeyFile)
	}
	// TEST mode's stores live in its temporary data dir, never in a shared
	// database.
	if cfg.Store != "" && !cfg.TempDataDir {
		extra = append(extra, "CAIRN_STORE="+cfg.Store)
	}
	return supervisor.Env{
		Root: cfg.Root, DataDir: cfg.DataDir, Mode: cfg.Mode, HostVersion: f.opts.Version,
		ExtraEnv: extra, Logger: f.log.Named("plugin"), Bus: f.bus,
		Backoff:      supervisor.Backoff{Max: cfg.RestartBackoffMax},
		AskClient:    f.listener.AskClient,
		CallAreaTool: f.listener.CallAreaTool,
	}
}

func (f *Fleet) hooks() supervisor.Hooks {
	return supervisor.Hooks{
		Restarted: func(p *supervisor.Process) {
			if err := f.adopt(context.Background(), p); err != nil {
				f.log.Error("plugin restarted with tools the host cannot take", "plugin", p.Name(), "error", err)
				f.setProblem(p.Name(), err.Error())
				return
			}
			f.clearProblem(p.Name())
			f.listener.ToolsChanged()
			f.publishReady()
		},
		Opened: func(p *supervisor.Process) {
			f.listener.Opened(context.Background(), p)
		},
		Down: func(p *supervisor.Process, err error) {
			f.setProblem(p.Name(), "restarting after a crash")
		},
		Failed: func(p *supervisor.Process, err error) {
			f.setProblem(p.Name(), err.Error())
			f.mu.Lock()
			live := f.live
			f.mu.Unlock()
			if live {
				f.reg.Remove(p.Name())
				f.listener.Dropped(p.Name())
				f.listener.ToolsChanged()
			}
		},
	}
}

// publishReady tells every plugin that all are subscribed (sdk.EventHostReady)
// and opens the bus to durable events.
func (f *Fleet) publishReady() {
	f.bus.MarkSubscribed()
	f.bus.Publish(events.Event{Type: sdk.EventHostReady, Source: "host", Data: json.RawMessage(`{}`)})
}

func (f *Fleet) startAll(ctx context.Context, specs []supervisor.Spec) map[string]*supervisor.Process {
	var wg sync.WaitGroup
	var mu sync.Mutex
	out := map[string]*supervisor.Process{}
	env, hooks := f.supervisorEnv(), f.hooks()
	for _, s := range specs {
		wg.Add(1)
		go func(s supervisor.Spec) {
			defer wg.Done()
			p, err := supervisor.Start(ctx, s, env, hooks)
			if err != nil {
				f.log.Debug("plugin start failed", "plugin", s.Name, "error", err)
			}
			mu.Lock()
			out[s.Name] = p
			mu.Unlock()
			f.mu.Lock()
			f.plugins[s.Name] = p
			f.specs[s.Name] = s
			f.fprints[s.Name] = s.Fingerprint()
			f.mu.Unlock()
		}(s)
	}
	wg.Wait()
	return out
}

// adopt registers a described plugin's tools and resources.
func (f *Fleet) adopt(ctx context.Context, p *supervisor.Process) error {
	if err := f.register(p); err != nil {
		return err
	}
	f.openAll(ctx, []*supervisor.Process{p})
	return nil
}

// register registers a described plugin's tools.
func (f *Fleet) register(p *supervisor.Process) error {
	// A plugin from outside the binary has its schemas compiled here, so a
	// keyword the validator does not implement (or a bad pattern) refuses
	// the plugin at registration. The built-in areas' schemas are fixed at
	// build time and compiled by their tests (sdk/schema's differential
	// test over every tool snapshot); theirs compile on a tool's first
	// call, as start-up should not pay for tools a session never calls.
	tools, err := p.Tools(!p.Spec().Builtin())
	if err != nil {
		return fmt.Errorf("plugin %s: %w", p.Name(), err)
	}
	return f.reg.Set(p.Name(), tools)
}

// openAll lists the resources and prompts of the registered plugins that
// are open, all at once: each is a round trip to its plugin, and one after
// another they were a millisecond of a cold start's first answer. An
// opening plugin lists its own once it is open (the Opened hook): its
// calls, these included, wait until then.
func (f *Fleet) openAll(ctx context.Context, ps []*supervisor.Process) {
	var wg sync.WaitGroup
	for _, p := range ps {
		if p.Status().State != supervisor.StateRunning {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.listener.Opened(ctx, p)
		}()
	}
	wg.Wait()
}
