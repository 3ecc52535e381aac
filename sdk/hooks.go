package sdk

import "context"

// Hooks are a plugin's lifecycle: the work that runs when the host
// configures it, the start-up work that may outlast the start, the work
// that runs when it stops, and its health report. A nil field adds
// nothing.
type Hooks struct {
	// Configure runs when the host configures the plugin, before any tool
	// call: open stores here. An error stops the plugin from starting and
	// is shown to the operator.
	Configure func(ctx context.Context, cfg Config) error

	// Open is start-up work that may take longer than the host allows a
	// start (30 s): completing an interrupted import, building an index a
	// new release added, writing what an earlier process left pending. It
	// runs after every Configure hook. Work done within 5 seconds answers
	// the host's Configure as a hook would, an error refusing the start;
	// longer work goes on after the answer: meanwhile the plugin's health
	// is "opening" (HealthOpening) with the step the work last passed to
	// report, and the host holds the plugin's calls, events and resource
	// reads until the work is done, so no handler sees the plugin
	// half-open. Keep what should refuse a start at once (a locked store,
	// a bad setting) in Configure.
	//
	// An error after the answer ends the process, with the error as its
	// last log line: the host restarts the plugin with backoff, as after a
	// crash. sdktest.Configure, the in-process form tests use, runs the
	// work before it returns.
	Open func(ctx context.Context, cfg Config, report func(step string)) error

	// Stop runs when the host stops the plugin: close stores and flush
	// here. Stop hooks run in reverse order of registration.
	Stop func(ctx context.Context) error

	// Health is the function behind the plugin's health report; a later
	// AddHooks with a Health replaces it.
	Health func(ctx context.Context) Health
}

// AddHooks registers h's hooks. Configure and Open hooks from several
// calls run in the order they were added, Stop hooks in reverse.
func (p *Plugin) AddHooks(h Hooks) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.Configure != nil {
		p.onConfigure = append(p.onConfigure, h.Configure)
	}
	if h.Open != nil {
		p.onOpen = append(p.onOpen, h.Open)
	}
	if h.Stop != nil {
		p.onStop = append(p.onStop, h.Stop)
	}
	if h.Health != nil {
		p.health = h.Health
	}
}
