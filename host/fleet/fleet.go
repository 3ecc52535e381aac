// Package fleet is the host's plugin fleet: which plugins to run (the
// built-in areas, the config file's plugins, the plugin dir's, each
// workspace one only once trusted: host/trust), starting and reloading
// them under host/supervisor, and what went wrong with each. What the
// plugins serve reaches MCP through a Listener (host/mcpserver is one).
package fleet

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/config"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/registry"
	"github.com/cairn-mcp/cairn/host/supervisor"
	"github.com/cairn-mcp/cairn/host/trust"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Options are the fleet's inputs besides the configuration.
type Options struct {
	// Version of the host, told to every plugin.
	Version string
	// Executable is the cairn binary: built-in areas run from it, or from
	// cairn-areas beside it (areasExecutable).
	Executable string
	Logger     hclog.Logger
	Bus        *events.Bus
	// Registry receives each plugin's tools.
	Registry *registry.Registry
}

// Listener is told as plugins come and go, and answers their requests for
// the client of a running call.
type Listener interface {
	// Opened: the plugin is open; publish its resources and prompts.
	Opened(ctx context.Context, p *supervisor.Process)
	// Dropped: the plugin stopped for good; forget what it served.
	Dropped(name string)
	// ToolsChanged: the registry's tools changed; publish them.
	ToolsChanged()
	// AskClient passes a plugin's request to the client of one of its
	// running calls.
	AskClient(ctx context.Context, owner string, req seam.Ask) (json.RawMessage, *errs.Error)
	// CallAreaTool runs another area's tool for one of a plugin's running
	// calls, as that call's caller.
	CallAreaTool(ctx context.Context, owner string, call seam.ToolCallback) seam.Result
}

// Fleet is the host's supervised plugins.
type Fleet struct {
	cfg      config.Settings
	opts     Options
	log      hclog.Logger
	bus      *events.Bus
	reg      *registry.Registry
	listener Listener

	mu        sync.Mutex
	plugins   map[string]*supervisor.Process
	specs     map[string]supervisor.Spec
	fprints   map[string]string
	problems  map[string]string
	untrusted []trust.Untrusted
	// untrustedKnown: Specs has decided untrusted (see Untrusted).
	untrustedKnown bool
	live           bool
	// laterSpecs are the plugins StartFirst left for StartLater;
	// laterDone is closed once they have started or failed, or were
	// dropped by a stop (Started).
	laterSpecs []supervisor.Spec
	laterDone  chan struct{}

	areasOnce sync.Once
	areas     string
}

// New prepares a fleet; Listen names its listener before Start.
func New(cfg config.Settings, opts Options) *Fleet {
	return &Fleet{
		cfg: cfg, opts: opts, log: opts.Logger, bus: opts.Bus, reg: opts.Registry,
		plugins: map[string]*supervisor.Process{}, specs: map[string]supervisor.Spec{},
		fprints: map[string]string{}, problems: map[string]string{},
		laterDone: closed(),
	}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Listen makes l the fleet's listener. Call it once, before Start.
func (f *Fleet) Listen(l Listener) { f.listener = l }

// Processes returns the supervised plugin processes in name order.
func (f *Fleet) Processes() []*supervisor.Process {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*supervisor.Process, 0, len(f.plugins))
	for _, p := range f.plugins {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Process is the process of the plugin called name, nil when none is
// supervised.
func (f *Fleet) Process(name string) *supervisor.Process {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.plugins[name]
}

// Problems returns non-fatal problems by plugin name.
func (f *Fleet) Problems() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.problems))
	for k, v := range f.problems {
		out[k] = v
	}
	return out
}

func (f *Fleet) setProblem(name, msg string) {
	f.mu.Lock()
	f.problems[name] = msg
	f.mu.Unlock()
}

func (f *Fleet) clearProblem(name string) {
	f.mu.Lock()
	delete(f.problems, name)
	f.mu.Unlock()
}

// Stop stops every plugin, in parallel, once those left for later are up:
// they start even for a session that ended first, so that every plugin has
// subscribed and the events its calls published reach them.
func (f *Fleet) Stop(ctx context.Context) {
	f.StartLater()
	f.awaitLater(ctx)
	var wg sync.WaitGroup
	for _, p := range f.Processes() {
		wg.Add(1)
		go func(p *supervisor.Process) {
			defer wg.Done()
			p.Stop(ctx)
		}(p)
	}
	wg.Wait()
}
