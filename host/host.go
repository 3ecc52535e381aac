// Package host is the cairn plugin host. It wires the path of a call:
// a transport (host/transport/stdio, host/transport/httpserve) reads a message
// and opens its session (host/session); the MCP glue here (mcp.go) turns a
// tools/call into a pipeline call (host/pipeline); the pipeline's last stage
// dispatches to a plugin through the one seam to the protocol (host/plugin);
// host/supervisor runs the plugin processes. host.go builds and starts these
// and reloads them; the transports see the host only through sessionHooks
// (transports.go).
package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/cluster"
	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/session"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/transport/httpserve"
	"github.com/cairn-mcp/cairn/host/transport/stdio"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version is the host version, set at build time with
// -ldflags "-X github.com/cairn-mcp/cairn/host.Version=...".
var Version = "0.1.0-dev"

// ServeBuiltinArg is the hidden first argument that makes the cairn binary
// serve one built-in area as a plugin process.
const ServeBuiltinArg = "__serve-plugin"

// Options are the host's non-configuration inputs.
type Options struct {
	// Version of the host.
	Version string
	// Executable is the cairn binary re-executed for built-in areas.
	Executable string
	Logger     hclog.Logger
}

// Host is one running cairn host.
type Host struct {
	// asks are the running calls whose client a plugin may ask.
	asks    clientAsks
	cfg     config.Settings
	opts    Options
	log     hclog.Logger
	bus     *events.Bus
	reg     *registry.Registry
	metrics *pipeline.Metrics
	pipe    *pipeline.Pipeline
	mcp     *server.MCPServer
	started time.Time

	mu        sync.Mutex
	plugins   map[string]*supervisor.Plugin
	specs     map[string]supervisor.Spec
	fprints   map[string]string
	problems  map[string]string
	untrusted []trust.Untrusted
	// untrustedKnown: Specs has decided untrusted (see Untrusted).
	untrustedKnown bool
	live           bool
	resources      map[string][]server.ServerResource
	templates      map[string][]server.ServerResourceTemplate
	// auth, when set, guards the HTTP transport with API keys.
	auth httpserve.Authenticator
	// resKeys fingerprints each plugin's listed resources, so a refresh
	// that finds nothing new changes nothing (and notifies nobody).
	resKeys map[string]string
	// defaultSession holds the settings of sessions whose transport brings
	// none of its own (stdio without a daemon, HTTP).
	defaultSession *session.Settings
	// logs fans log lines out to the sessions that asked for them.
	logs   *session.Logs
	limits session.Limits
	// prompts holds the plugins' prompts; subs the sessions' resource
	// subscriptions; unwatch ends the bus watches that serve both.
	prompts *promptTable
	subs    *session.Subscriptions
	unwatch func()
	// cluster is the cluster bus while a transport serves on PostgreSQL.
	cluster *cluster.Membership
	// projects remembers the project each session used last (D31).
	projects session.Projects

	// stdio serves the byte-stream sessions (ServeConn, ServeStdio); http
	// the HTTP listeners (ServeHTTP, ServeHTTPWith).
	stdio *stdio.Server
	http  *httpserve.Server
}

// New prepares a host; Start launches the plugins.
func New(cfg config.Settings, opts Options) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "cairn", Output: os.Stderr, Level: hclog.Info})
	}
	if opts.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, errs.Newf(500, errs.InitFailed, "cannot locate the cairn executable to start built-in plugins: %v", err)
		}
		opts.Executable = exe
	}
	h := &Host{
		cfg: cfg, opts: opts, log: opts.Logger,
		bus: events.New(opts.Logger.Named("events")), reg: registry.New(), metrics: pipeline.NewMetrics(),
		started: time.Now(), plugins: map[string]*supervisor.Plugin{}, specs: map[string]supervisor.Spec{},
		fprints: map[string]string{}, problems: map[string]string{},
		resources: map[string][]server.ServerResource{}, templates: map[string][]server.ServerResourceTemplate{},
		resKeys: map[string]string{}, defaultSession: session.Default(cfg),
	}
	h.logs = session.NewLogs()
	h.cluster = &cluster.Membership{Store: cfg.Store, Local: cfg.TempDataDir, Bus: h.bus, Log: h.log}
	if il, ok := opts.Logger.(hclog.InterceptLogger); ok {
		il.RegisterSink(h.logs)
	}
	lim, err := session.LoadLimits(os.Getenv)
	if err != nil {
		return nil, err
	}
	h.limits = lim
	// The transports see the host only through sessionHooks.
	h.stdio = stdio.New(sessionHooks{h}, h.log)
	h.http = httpserve.New(sessionHooks{h}, lim, h.log)
	h.pipe = pipeline.New(h.dispatch,
		pipeline.Recover(h.log),
		pipeline.Identify(cfg.AgentID),
		pipeline.Authorize(),
		pipeline.Filter(h.refuse),
		pipeline.Audit(h.log.Named("audit")),
		h.metrics.Stage(),
	)
	// Plugins add resources while they run (an sdd skill registered by a
	// tool call): ask them again whenever a client lists resources.
	hooks := &server.Hooks{}
	hooks.AddBeforeListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest) { h.refreshResources(ctx) })
	hooks.AddBeforeListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest) { h.refreshResources(ctx) })
	h.prompts, h.subs = newPromptTable(), session.NewSubscriptions()
	hooks.AddBeforeListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest) { h.refreshPrompts(ctx) })
	h.hookSubscriptions(hooks)
	h.projects.Hook(hooks)
	h.unwatch = h.watchProtocolEvents()
	// Each session lists only its own toolsets' and mode's tools (D21).
	hooks.AddAfterListTools(func(ctx context.Context, _ any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res != nil {
			res.Tools = h.filterListed(ctx, res.Tools)
			if req != nil && req.Params.Meta != nil && mcp.IsModernProtocol(req.Params.Meta.ProtocolVersion()) {
				// 2026-07-28 has no execution member: the server
				// decides which calls become tasks (host/tasks.go).
				for i := range res.Tools {
					res.Tools[i].Execution = nil
				}
			}
		}
	})
	h.mcp = server.NewMCPServer("cairn", opts.Version,
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithExtensions(extensionsCapability()),
		// Tasks are the host's own (host/tasks.go): mcp-go only declares
		// the capability.
		server.WithTaskCapabilities(true, true, true),
		server.WithPromptFilter(h.filterPrompts),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{h}),
		server.WithResourceCompletionProvider(completions{h}),
		server.WithRecovery(),
		server.WithLogging(),
		server.WithInstructions(instructions),
	)
	if err := h.registerSystemTools(); err != nil {
		return nil, err
	}
	return h, nil
}

// Settings returns the host's configuration.
func (h *Host) Settings() config.Settings { return h.cfg }

// Bus returns the event bus.
func (h *Host) Bus() *events.Bus { return h.bus }

// instructions is what the server tells every client at initialize.
const instructions = "cairn gives you a task pipeline, a tamper-evident decision trail and a spec-driven workflow. " +
	"Your session has an active project from the start (CAIRN_PROJECT, else your workspace directory's name), so task_create and task_next_actions work without naming one. " +
	"Start with task_next_actions or skill_list; record decisions with thought_record."

func (h *Host) supervisorEnv() supervisor.Env {
	extra := []string{
		"CAIRN_ROOT=" + h.cfg.Root,
		"CAIRN_DATA_DIR=" + h.cfg.DataDir,
		"CAIRN_MODE=" + h.cfg.Mode,
		"CAIRN_ENV=" + h.cfg.Env,
		"CAIRN_LOG_LEVEL=" + h.cfg.LogLevel,
		// Always set, so a CAIRN_PROJECT the host ignored (not a slug)
		// never reaches a plugin through the inherited environment.
		"CAIRN_PROJECT=" + h.cfg.Project,
	}
	if h.cfg.AuditKeyFile != "" {
		extra = append(extra, bundle.KeyFileEnv+"="+h.cfg.AuditKeyFile)
	}
	// TEST mode's stores live in its temporary data dir, never in a shared
	// database.
	if h.cfg.Store != "" && !h.cfg.TempDataDir {
		extra = append(extra, "CAIRN_STORE="+h.cfg.Store)
	}
	return supervisor.Env{
		Root: h.cfg.Root, DataDir: h.cfg.DataDir, Mode: h.cfg.Mode, HostVersion: h.opts.Version,
		ExtraEnv: extra, Logger: h.log.Named("plugin"), Bus: h.bus,
		Backoff:   supervisor.Backoff{Max: h.cfg.RestartBackoffMax},
		AskClient: h.askClient,
	}
}

func (h *Host) hooks() supervisor.Hooks {
	return supervisor.Hooks{
		Restarted: func(p *supervisor.Plugin) {
			if err := h.adopt(context.Background(), p); err != nil {
				h.log.Error("plugin restarted with tools the host cannot take", "plugin", p.Name(), "error", err)
				h.setProblem(p.Name(), err.Error())
				return
			}
			h.clearProblem(p.Name())
			h.syncTools()
			h.publishReady()
		},
		Opened: func(p *supervisor.Plugin) {
			h.adoptResources(context.Background(), p)
		},
		Down: func(p *supervisor.Plugin, err error) {
			h.setProblem(p.Name(), "restarting after a crash")
		},
		Failed: func(p *supervisor.Plugin, err error) {
			h.setProblem(p.Name(), err.Error())
			h.mu.Lock()
			live := h.live
			h.mu.Unlock()
			if live {
				h.reg.Remove(p.Name())
				h.dropResources(p.Name())
				h.syncTools()
			}
		},
	}
}

// publishReady tells every plugin that all are subscribed (sdk.EventHostReady)
// and opens the bus to durable events.
func (h *Host) publishReady() {
	h.bus.MarkSubscribed()
	h.bus.Publish(events.Event{Type: sdk.EventHostReady, Source: "host", Data: json.RawMessage(`{}`)})
}

func (h *Host) setProblem(name, msg string) {
	h.mu.Lock()
	h.problems[name] = msg
	h.mu.Unlock()
}

func (h *Host) clearProblem(name string) {
	h.mu.Lock()
	delete(h.problems, name)
	h.mu.Unlock()
}

// Start launches every plugin in parallel and registers their tools. A
// required plugin that cannot start, or two plugins claiming one tool name,
// is an ERR_INIT_FAILED error; an optional plugin that fails is reported in
// server_health and `cairn plugins`.
func (h *Host) Start(ctx context.Context) error {
	for _, w := range h.cfg.Warnings {
		h.log.Warn(w)
	}
	if err := os.MkdirAll(h.cfg.DataDir, 0o700); err != nil {
		return errs.Newf(500, errs.InitFailed, "cannot create the data directory %s: %v", h.cfg.DataDir, err)
	}
	specs, err := h.Specs()
	if err != nil {
		return err
	}
	started := h.startAll(ctx, specs)
	for _, s := range specs {
		p := started[s.Name]
		st := p.Status()
		// A plugin still opening counts as started: its calls wait for
		// it (docs/decisions.md D34).
		if !st.State.Started() {
			if s.Required {
				h.Shutdown(context.Background())
				// A plugin's own ERR_INIT_FAILED says it once, not twice.
				return errs.Newf(500, errs.InitFailed, "%s", strings.Replace(st.LastError, ": "+errs.InitFailed+": ", ": ", 1))
			}
			h.log.Error("plugin failed to start; continuing without it", "plugin", s.Name, "error", st.LastError)
			h.setProblem(s.Name, st.LastError)
			continue
		}
		if err := h.adopt(ctx, p); err != nil {
			h.Shutdown(context.Background())
			return errs.Newf(500, errs.InitFailed, "%v", err)
		}
	}
	h.checkToolsets()
	h.mu.Lock()
	h.live = true
	h.mu.Unlock()
	h.syncTools()
	h.publishReady()
	h.log.Info("cairn ready", "tools", len(h.VisibleTools()), "plugins", len(specs), "mode", h.defaultSession.Mode, "toolsets", h.defaultSession.Toolsets.String())
	return nil
}

func (h *Host) startAll(ctx context.Context, specs []supervisor.Spec) map[string]*supervisor.Plugin {
	var wg sync.WaitGroup
	var mu sync.Mutex
	out := map[string]*supervisor.Plugin{}
	env, hooks := h.supervisorEnv(), h.hooks()
	for _, s := range specs {
		wg.Add(1)
		go func(s supervisor.Spec) {
			defer wg.Done()
			p, err := supervisor.Start(ctx, s, env, hooks)
			if err != nil {
				h.log.Debug("plugin start failed", "plugin", s.Name, "error", err)
			}
			mu.Lock()
			out[s.Name] = p
			mu.Unlock()
			h.mu.Lock()
			h.plugins[s.Name] = p
			h.specs[s.Name] = s
			h.fprints[s.Name] = s.Fingerprint()
			h.mu.Unlock()
		}(s)
	}
	wg.Wait()
	return out
}

// adopt registers a described plugin's tools and resources.
func (h *Host) adopt(ctx context.Context, p *supervisor.Plugin) error {
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
	if err := h.reg.Set(p.Name(), tools); err != nil {
		return err
	}
	// An opening plugin lists its resources and prompts once it is open
	// (the Opened hook): its calls, these included, wait until then.
	if p.Status().State == supervisor.StateRunning {
		h.adoptResources(ctx, p)
	}
	return nil
}

// Plugins returns the supervised plugins in name order.
func (h *Host) Plugins() []*supervisor.Plugin {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*supervisor.Plugin, 0, len(h.plugins))
	for _, p := range h.plugins {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Problems returns non-fatal problems by plugin name.
func (h *Host) Problems() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]string, len(h.problems))
	for k, v := range h.problems {
		out[k] = v
	}
	return out
}

// Reload re-reads the config file and restarts the plugins whose binary or
// settings changed, starts new ones and stops removed ones (SIGHUP).
func (h *Host) Reload(ctx context.Context) error {
	file, err := config.LoadFile(h.cfg.ConfigFile, true)
	if err != nil {
		h.log.Error("config reload refused; keeping the running configuration", "error", err)
		return err
	}
	h.mu.Lock()
	h.cfg.File = file
	h.mu.Unlock()
	specs, err := h.Specs()
	if err != nil {
		h.log.Error("config reload refused; keeping the running configuration", "error", err)
		return err
	}
	want := map[string]supervisor.Spec{}
	for _, s := range specs {
		want[s.Name] = s
	}
	h.mu.Lock()
	var stop []*supervisor.Plugin
	var start []supervisor.Spec
	// A plugin whose binary or settings changed is replaced make before
	// break: the old process serves until the new one runs, so an upgrade
	// never leaves its tools missing (docs/decisions.md D36).
	replacing := map[string]*supervisor.Plugin{}
	oldSpecs := map[string]supervisor.Spec{}
	for name, p := range h.plugins {
		s, keep := want[name]
		switch {
		case !keep:
			stop = append(stop, p)
			delete(h.plugins, name)
			delete(h.problems, name)
		case s.Fingerprint() != h.fprints[name]:
			replacing[name], oldSpecs[name] = p, h.specs[name]
		}
	}
	for name, s := range want {
		if _, running := h.plugins[name]; !running || replacing[name] != nil {
			start = append(start, s)
		}
	}
	h.mu.Unlock()
	for _, p := range stop {
		h.log.Info("stopping plugin for reload", "plugin", p.Name())
		p.Stop(ctx)
		h.reg.Remove(p.Name())
		h.dropResources(p.Name())
	}
	sort.Slice(start, func(i, j int) bool { return start[i].Name < start[j].Name })
	started := h.startAll(ctx, start)
	var firstErr error
	keepOld := func(name string, p *supervisor.Plugin, why string) {
		old := replacing[name]
		h.mu.Lock()
		h.plugins[name], h.specs[name], h.fprints[name] = old, oldSpecs[name], oldSpecs[name].Fingerprint()
		h.mu.Unlock()
		h.setProblem(name, "its new version did not start, so the old one keeps serving: "+why)
		h.log.Error("new plugin version refused on reload; the old one keeps serving", "plugin", name, "error", why)
		p.Stop(ctx)
	}
	for _, s := range start {
		p := started[s.Name]
		if !p.Status().State.Started() {
			if replacing[s.Name] != nil {
				keepOld(s.Name, p, p.Status().LastError)
				continue
			}
			h.setProblem(s.Name, p.Status().LastError)
			h.log.Error("plugin failed to start on reload", "plugin", s.Name, "error", p.Status().LastError)
			continue
		}
		if err := h.adopt(ctx, p); err != nil {
			if replacing[s.Name] != nil {
				keepOld(s.Name, p, err.Error())
				continue
			}
			h.log.Error("plugin refused on reload", "plugin", s.Name, "error", err)
			h.setProblem(s.Name, err.Error())
			p.Stop(ctx)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if old := replacing[s.Name]; old != nil {
			// The new version serves now; the old one's calls end with it.
			h.log.Info("plugin replaced on reload", "plugin", s.Name)
			h.mu.Lock()
			delete(h.problems, s.Name)
			h.mu.Unlock()
			old.Stop(ctx)
		}
	}
	h.syncTools()
	h.log.Info("configuration reloaded", "stopped", len(stop), "replaced", len(replacing), "started", len(start)-len(replacing))
	return firstErr
}

// Shutdown stops every plugin, in parallel.
func (h *Host) Shutdown(ctx context.Context) {
	h.unwatch()
	var wg sync.WaitGroup
	for _, p := range h.Plugins() {
		wg.Add(1)
		go func(p *supervisor.Plugin) {
			defer wg.Done()
			p.Stop(ctx)
		}(p)
	}
	wg.Wait()
}
