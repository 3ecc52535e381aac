package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// Config is what the host tells a plugin at start. It is the seam's
// type, the one the host sends.
type Config = seam.Config

// Health is a plugin's report of its own state.
type Health struct {
	// Status is "ok" or "degraded"; the SDK reports "opening"
	// (HealthOpening) itself while the open work runs.
	Status string
	// Message explains a degraded status.
	Message string
	// Details is a JSON-able object merged into server_health; a plugin
	// owning the core store reports {"db": {...}}.
	Details map[string]any
}

// EventHostReady is published by the host once every plugin has started and
// subscribed, and again after a plugin restart. A plugin that holds events
// from before the host was ready (queued while no server ran, say) publishes
// them when it receives this, so no subscriber misses them.
const EventHostReady = "host.ready"

// Event is a message on the host's event bus (docs/decisions.md D19). It
// is the seam's type, the one that crosses to and from the host.
type Event = seam.Event

// Plugin collects a plugin's tools, resources and hooks. Build one with New,
// add tools with AddTool, then call Serve.
type Plugin struct {
	name        string
	version     string
	description string
	toolset     string
	logger      hclog.Logger

	mu          sync.RWMutex
	tools       map[string]*tool
	toolOrder   []string
	resources   []Resource
	templates   []ResourceTemplate
	readers     []resourceReader
	listers     []func(ctx context.Context) ([]Resource, error)
	prompts     promptSet
	completers  []Completer
	subs        []subscription
	onConfigure []func(ctx context.Context, cfg Config) error
	onOpen      []func(ctx context.Context, cfg Config, report func(step string)) error
	onStop      []func(ctx context.Context) error
	health      func(ctx context.Context) Health
	// derived are the tools' schemas worked out ahead of time
	// (WithDerivedSchemas).
	derived map[string]ToolSchemas

	host       hostLink
	cfg        Config
	configured bool
	// tasks keeps the tasks of tools with TaskSupport (nil when no tool
	// declares it, or before Configure).
	tasks *tasks
	// opening is the open work's progress (opening.go).
	opening opening
}

// Option configures a Plugin.
type Option func(*Plugin)

// WithDescription sets the plugin's one-line description.
func WithDescription(d string) Option { return func(p *Plugin) { p.description = d } }

// sdk.InternalToolset is the reserved toolset of tools only the host and the
// operator's commands call (an authenticator, an export the host signs):
// no session lists or calls them.
const InternalToolset = "internal"

// WithToolset sets the toolset of tools that do not name one; it defaults
// to the plugin name.
func WithToolset(ts string) Option { return func(p *Plugin) { p.toolset = ts } }

// WithLogger replaces the default logger (JSON lines on stderr).
func WithLogger(l hclog.Logger) Option { return func(p *Plugin) { p.logger = l } }

// pluginNameRule is the rule validPluginName checks, for its panic.
const pluginNameRule = `^[a-z0-9][a-z0-9_-]{0,63}$`

// validPluginName reports whether name matches pluginNameRule: checked by
// hand, since compiling the expression was a visible share of a plugin's
// start-up.
func validPluginName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] == '_' || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// New creates a plugin. name must match ^[a-z0-9][a-z0-9_-]{0,63}$ and
// version should be semver.
func New(name, version string, opts ...Option) *Plugin {
	if !validPluginName(name) {
		panic(fmt.Sprintf("sdk.New: plugin name %q must match %s", name, pluginNameRule))
	}
	p := &Plugin{name: name, version: version, toolset: name, tools: map[string]*tool{}}
	for _, o := range opts {
		o(p)
	}
	if p.logger == nil {
		p.logger = hclog.New(&hclog.LoggerOptions{
			Name:       name,
			Output:     os.Stderr,
			JSONFormat: true,
			Level:      hclog.LevelFromString(envOr("CAIRN_LOG_LEVEL", "info")),
		})
	}
	return p
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Logger returns the plugin's logger. Lines go to stderr as JSON, which the
// host re-logs under the plugin's name.
func (p *Plugin) Logger() hclog.Logger { return p.logger }

// Config returns the configuration the host sent (zero before Configure).
func (p *Plugin) Config() Config {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cfg
}

type subscription struct {
	pattern string
	handler func(ctx context.Context, ev Event) error
}

// OnEvent subscribes to host bus events. pattern is an exact type
// ("task.created"), a category wildcard ("task.*") or "*".
func (p *Plugin) OnEvent(pattern string, handler func(ctx context.Context, ev Event) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.subs = append(p.subs, subscription{pattern: pattern, handler: handler})
}

// Publish puts an event on the host's bus. data is marshalled to JSON. It
// fails before the host has configured the plugin.
//
// Publish does not wait for the host: the event is queued and reaches the
// bus after every event this plugin published before it. FlushEvents waits
// until the host has them all; Stop flushes before the process ends.
func (p *Plugin) Publish(ctx context.Context, eventType string, data any) error {
	if strings.TrimSpace(eventType) == "" {
		return fmt.Errorf("sdk: publish: the event type is empty")
	}
	p.mu.RLock()
	h := p.host
	p.mu.RUnlock()
	if h == nil {
		return fmt.Errorf("sdk: publish %s: plugin is not connected to a host", eventType)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("sdk: publish %s: %w", eventType, err)
	}
	return h.publish(ctx, eventType, raw)
}

// PublishDurable puts an event that carries its own id and time (assigned
// when the plugin recorded it, for example in an outbox written with the
// change) on the host's bus, queued behind every event published before it
// without waiting. done hears the outcome: nil once the event is on the bus
// and every other plugin's handler subscribed to it has returned, or why
// it must be published again under the same id (a handler failed, the host
// refused it). done runs on the publisher's goroutine and must not block.
func (p *Plugin) PublishDurable(ev Event, done func(error)) error {
	if strings.TrimSpace(ev.Type) == "" || ev.ID == "" {
		return fmt.Errorf("sdk: publish durable: the event needs a type and an id")
	}
	p.mu.RLock()
	h := p.host
	p.mu.RUnlock()
	if h == nil {
		return fmt.Errorf("sdk: publish %s: plugin is not connected to a host", ev.Type)
	}
	h.publishDurable(seam.Event{ID: ev.ID, Type: ev.Type, Time: ev.Time, Data: ev.Data}, done)
	return nil
}

// FlushEvents waits until the host has put every event published so far on
// its bus.
func (p *Plugin) FlushEvents(ctx context.Context) error {
	p.mu.RLock()
	h := p.host
	p.mu.RUnlock()
	if h == nil {
		return nil
	}
	return h.flush(ctx)
}

// hostLink is the plugin's view of the host services.
type hostLink interface {
	publish(ctx context.Context, eventType string, data []byte) error
	publishDurable(ev seam.Event, done func(error))
	flush(ctx context.Context) error
	// askClient returns the client's result, the typed error that kept
	// the client from answering, or err when the host could not be asked.
	askClient(ctx context.Context, ask seam.Ask) (result json.RawMessage, fail *errs.Error, err error)
	// callAreaTool returns the outcome of another area's tool, or err
	// when the host could not be asked.
	callAreaTool(ctx context.Context, call seam.ToolCallback) (seam.Result, error)
}

// ToolInfo describes a declared tool.
type ToolInfo struct {
	Name         string
	Title        string
	Description  string
	Toolset      string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	ReadOnly     bool
	Destructive  bool
	Idempotent   bool
	OpenWorld    bool
	// HonoursIdempotency: see Tool.HonoursIdempotency.
	HonoursIdempotency bool
	// TaskSupport: see Tool.TaskSupport.
	TaskSupport TaskSupport
	// CallsTools: see Tool.CallsTools.
	CallsTools bool
}

// toolInfos lists the declared tools in declaration order.
func (p *Plugin) toolInfos() []ToolInfo {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]ToolInfo, 0, len(p.toolOrder))
	for _, n := range p.toolOrder {
		out = append(out, p.tools[n].info)
	}
	return out
}

// subscriptions lists the event patterns the plugin subscribed to.
func (p *Plugin) subscriptions() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, s := range p.subs {
		if !seen[s.pattern] {
			seen[s.pattern] = true
			out = append(out, s.pattern)
		}
	}
	sort.Strings(out)
	return out
}

// start runs the configure hooks, then the open work: the in-process
// form (package sdktest) of what Serve does for a host, which answers the
// host after the configure hooks and runs the open work after that
// (opening.go).
func (p *Plugin) start(ctx context.Context, cfg Config) error {
	if err := p.configure(ctx, cfg); err != nil {
		return err
	}
	return p.open(ctx, cfg)
}

// configure runs the Configure hooks: what the host waits for before it
// takes the plugin as started. The open work follows (opening.go).
func (p *Plugin) configure(ctx context.Context, cfg Config) error {
	if err := p.openTasks(cfg.DataDir); err != nil {
		return err
	}
	p.mu.Lock()
	p.cfg = cfg
	hooks := append([]func(context.Context, Config) error(nil), p.onConfigure...)
	p.mu.Unlock()
	for _, h := range hooks {
		if err := h(ctx, cfg); err != nil {
			return err
		}
	}
	p.mu.Lock()
	p.configured = true
	p.mu.Unlock()
	return nil
}

// stop runs the stop hooks in reverse order, once, then waits until the
// host has every event published so far.
func (p *Plugin) stop(ctx context.Context) error {
	// The stop hooks close what the open work uses: never beside it.
	if err := p.awaitOpen(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	hooks := p.onStop
	p.onStop = nil
	book := p.tasks
	p.mu.Unlock()
	if book != nil {
		book.stop()
	}
	var first error
	for i := len(hooks) - 1; i >= 0; i-- {
		if err := hooks[i](ctx); err != nil && first == nil {
			first = err
		}
	}
	if err := p.FlushEvents(ctx); err != nil && first == nil {
		first = fmt.Errorf("sdk: events not delivered to the host before stop: %w", err)
	}
	return first
}

// healthReport returns the plugin's health.
func (p *Plugin) healthReport(ctx context.Context) Health {
	if h, ok := p.openingHealth(); ok {
		return h
	}
	p.mu.RLock()
	f := p.health
	p.mu.RUnlock()
	if f == nil {
		return Health{Status: "ok"}
	}
	h := f(ctx)
	if h.Status == "" {
		h.Status = "ok"
	}
	return h
}

// deliverEvent runs the handlers subscribed to ev's type.
func (p *Plugin) deliverEvent(ctx context.Context, ev Event) error {
	p.mu.RLock()
	subs := append([]subscription(nil), p.subs...)
	p.mu.RUnlock()
	var first error
	for _, s := range subs {
		if seam.MatchEventType(s.pattern, ev.Type) {
			if err := s.handler(ctx, ev); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

func (p *Plugin) setHost(h hostLink) {
	p.mu.Lock()
	p.host = h
	p.mu.Unlock()
}
