// Package host is the cairn plugin host: it starts the area plugins and any
// third-party plugins, aggregates their tools, runs every call through the
// middleware pipeline, and serves MCP over stdio or streamable HTTP.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/workers"
)

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
	auth Authenticator
	// resKeys fingerprints each plugin's listed resources, so a refresh
	// that finds nothing new changes nothing (and notifies nobody).
	resKeys map[string]string
	// defaultSession holds the settings of sessions whose transport brings
	// none of its own (stdio without a daemon, HTTP).
	defaultSession *SessionSettings
	// logs fans log lines out to the sessions that asked for them.
	logs   *sessionLogs
	limits limits
	// prompts holds the plugins' prompts; subs the sessions' resource
	// subscriptions; unwatch ends the bus watches that serve both.
	prompts *promptTable
	subs    *subscriptions
	unwatch func()
	// cluster is the cluster bus while a transport serves on PostgreSQL.
	cluster clusterMembership

	// requests runs the requests of the byte-stream sessions (ServeConn).
	requests workers.Pool
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
		cfg: cfg, opts: opts, log: opts.Logger, requests: workers.New(nil),
		bus: events.New(opts.Logger.Named("events")), reg: registry.New(), metrics: pipeline.NewMetrics(),
		started: time.Now(), plugins: map[string]*supervisor.Plugin{}, specs: map[string]supervisor.Spec{},
		fprints: map[string]string{}, problems: map[string]string{},
		resources: map[string][]server.ServerResource{}, templates: map[string][]server.ServerResourceTemplate{},
		resKeys: map[string]string{}, defaultSession: DefaultSession(cfg),
	}
	h.logs = newSessionLogs(h)
	if il, ok := opts.Logger.(hclog.InterceptLogger); ok {
		il.RegisterSink(h.logs)
	}
	lim, err := loadLimits(getenv)
	if err != nil {
		return nil, err
	}
	h.limits = lim
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
	h.prompts, h.subs = newPromptTable(), newSubscriptions()
	hooks.AddBeforeListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest) { h.refreshPrompts(ctx) })
	h.hookSubscriptions(hooks)
	h.unwatch = h.watchProtocolEvents()
	// Each session lists only its own toolsets' and mode's tools (D21).
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res != nil {
			res.Tools = h.filterListed(ctx, res.Tools)
		}
	})
	h.mcp = server.NewMCPServer("cairn", opts.Version,
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithExtensions(skillsCapability()),
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

// Stages returns the pipeline stage names.
func (h *Host) Stages() []string { return h.pipe.Stages() }

// MCPServer returns the MCP server (for transports and tests).
func (h *Host) MCPServer() *server.MCPServer { return h.mcp }

// instructions is what the server tells every client at initialize.
const instructions = "cairn gives you a task pipeline, a tamper-evident decision trail and a spec-driven workflow. " +
	"Your session has an active project from the start (CAIRN_PROJECT, else your workspace directory's name), so task_create and task_next_actions work without naming one. " +
	"Start with task_next_actions or skill_list; record decisions with thought_record."

// refuse is the pipeline's filter: nil when the calling session may call
// the tool, else the typed refusal.
func (h *Host) refuse(ctx context.Context, t *registry.Tool) *errs.Error {
	s := h.sessionOf(ctx)
	if visibleTo(s, t) {
		return nil
	}
	return refusal(s, t)
}

// filterListed keeps the tools the calling session sees.
func (h *Host) filterListed(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	s := h.sessionOf(ctx)
	out := tools[:0]
	for _, mt := range tools {
		if t, ok := h.reg.Get(mt.Name); ok && visibleTo(s, t) {
			out = append(out, mt)
		}
	}
	return out
}

// VisibleTools lists the tools a session with the host's own settings
// sees, sorted by name.
func (h *Host) VisibleTools() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range h.reg.List() {
		if visibleTo(h.defaultSession, t) {
			out = append(out, t)
		}
	}
	return out
}

// servable lists every tool some session may call: all but the internal
// ones. MCP serves these; each session's list and calls are filtered.
func (h *Host) servable() []*registry.Tool {
	var out []*registry.Tool
	for _, t := range h.reg.List() {
		if t.Toolset != sdk.InternalToolset {
			out = append(out, t)
		}
	}
	return out
}

// AllTools lists every registered tool, visible or not.
func (h *Host) AllTools() []*registry.Tool { return h.reg.List() }

// Specs resolves which plugins to start: the built-in areas (or their
// replacements named in the config file), the config file's other plugins,
// and cairn-plugin-* executables in the plugin directory. Workspace plugins
// the operator has not trusted are left out (docs/decisions.md D23); Untrusted
// lists them.
func (h *Host) Specs() ([]supervisor.Spec, error) {
	specs, untrusted, err := h.resolveSpecs(true)
	h.mu.Lock()
	h.untrusted, h.untrustedKnown = untrusted, true
	h.mu.Unlock()
	return specs, err
}

// Untrusted lists the workspace plugins that are not started because the
// sha256 of their binary is not in the operator's trust store, each with
// the command that trusts it. Once Specs has run (start, reload) it is
// what Specs decided, so health and the dashboard do not hash the plugin
// binaries again; before, it resolves them.
func (h *Host) Untrusted() []trust.Untrusted {
	h.mu.Lock()
	if h.untrustedKnown {
		defer h.mu.Unlock()
		return append([]trust.Untrusted(nil), h.untrusted...)
	}
	h.mu.Unlock()
	_, out, _ := h.resolveSpecs(false)
	return out
}

// resolveSpecs is Specs, with the untrusted workspace plugins; logged
// says whether to log what it decides.
func (h *Host) resolveSpecs(logged bool) ([]supervisor.Spec, []trust.Untrusted, error) {
	if h.cfg.Mode == config.ModeMinimal {
		return nil, nil, nil
	}
	warn := func(msg string, args ...any) {
		if logged {
			h.log.Warn(msg, args...)
		}
	}
	// Code named by the workspace (its plugin dir, its config file) runs
	// only when the operator's trust store holds its sha256.
	gate := trust.OpenGate(h.cfg.TrustStorePath())
	configFromWorkspace, dirFromWorkspace := h.cfg.ConfigFromWorkspace(), h.cfg.PluginDirFromWorkspace()
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
	configOrigin, dirOrigin := "config file "+h.cfg.ConfigFile, "plugin dir "+h.cfg.PluginDir

	var specs []supervisor.Spec
	taken := map[string]bool{}
	for _, a := range builtin.All() {
		entry, inFile := h.cfg.File.Plugins[a.Name]
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
		s := supervisor.Spec{Name: a.Name, Source: "builtin", Path: h.opts.Executable, Args: []string{ServeBuiltinArg, a.Name}, Required: true}
		if inFile {
			s.Settings, s.Required = entry.Settings, true
			if len(entry.Env) > 0 && configFromWorkspace {
				// A built-in area keeps the host's environment (its API
				// key); a workspace must not add LD_PRELOAD or a base URL
				// that would send that key elsewhere.
				warn("ignoring env for a built-in area in the workspace config file; set it in a config file outside the workspace (--config or CAIRN_CONFIG)", "area", a.Name, "config", h.cfg.ConfigFile)
			} else {
				s.Env = fileSpec(a.Name, entry, true).Env
			}
		}
		specs = append(specs, s)
	}
	names := make([]string, 0, len(h.cfg.File.Plugins))
	for n := range h.cfg.File.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := h.cfg.File.Plugins[n]
		if taken[n] {
			continue
		}
		taken[n] = true
		if e.Disabled {
			continue
		}
		if e.Path == "" {
			return nil, nil, errs.Newf(400, errs.ConfigInvalid, "config file %s: plugins.%s needs a path to its executable", h.cfg.ConfigFile, n)
		}
		if s := fileSpec(n, e, e.Required); admit(&s, configFromWorkspace, configOrigin) {
			specs = append(specs, s)
		}
	}
	entries, err := os.ReadDir(h.cfg.PluginDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.log.Warn("cannot read the plugin directory", "dir", h.cfg.PluginDir, "error", err)
	}
	for _, de := range entries {
		name, ok := strings.CutPrefix(de.Name(), "cairn-plugin-")
		if !ok || name == "" || de.IsDir() {
			continue
		}
		path := filepath.Join(h.cfg.PluginDir, de.Name())
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

func (h *Host) supervisorEnv() supervisor.Env {
	extra := []string{
		"CAIRN_ROOT=" + h.cfg.Root,
		"CAIRN_DATA_DIR=" + h.cfg.DataDir,
		"CAIRN_MODE=" + h.cfg.Mode,
		"CAIRN_ENV=" + h.cfg.Env,
		"CAIRN_LOG_LEVEL=" + h.cfg.LogLevel,
	}
	if h.cfg.Project != "" {
		extra = append(extra, "CAIRN_PROJECT="+h.cfg.Project)
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
		if st.State != supervisor.StateRunning {
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
	if err := h.checkToolsets(); err != nil {
		h.Shutdown(context.Background())
		return err
	}
	h.mu.Lock()
	h.live = true
	h.mu.Unlock()
	h.syncTools()
	h.publishReady()
	h.log.Info("cairn ready", "tools", len(h.VisibleTools()), "plugins", len(specs), "mode", h.cfg.Mode, "toolsets", h.cfg.Toolsets.String())
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

// checkToolsets refuses the host's CAIRN_TOOLSETS entries that no loaded
// plugin provides, so a typo does not silently hide every tool.
func (h *Host) checkToolsets() error {
	return h.CheckToolsets(h.cfg.Mode, h.cfg.Toolsets)
}

// CheckToolsets refuses toolsets entries that no loaded plugin provides.
func (h *Host) CheckToolsets(mode string, ts config.Toolsets) error {
	if mode == config.ModeMinimal || !ts.Explicit {
		return nil
	}
	provided := map[string]bool{}
	for _, t := range h.reg.List() {
		provided[t.Toolset] = true
	}
	var unknown []string
	for ts := range ts.Enabled {
		if !provided[ts] {
			unknown = append(unknown, ts)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var have []string
	for ts := range provided {
		if ts != "system" && ts != sdk.InternalToolset {
			have = append(have, ts)
		}
	}
	sort.Strings(have)
	return errs.Newf(400, errs.ConfigInvalid, "CAIRN_TOOLSETS names %s, which no loaded plugin provides (available: %s)", strings.Join(unknown, ", "), strings.Join(have, ", "))
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
	h.adoptResources(ctx, p)
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
		if p.Status().State != supervisor.StateRunning {
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

// Call runs one tool call through the pipeline as caller, exactly as an MCP
// client's call would run (the dashboard and the CLI act through it).
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage, caller pipeline.Caller) *pipeline.Outcome {
	tool, ok := h.reg.Get(name)
	if !ok {
		return pipeline.Fail(errs.NotFoundf(errs.NotFound, "name", "no tool named %q", name))
	}
	return h.pipe.Run(ctx, &pipeline.Call{Name: name, Tool: tool, Args: args, Caller: caller})
}
