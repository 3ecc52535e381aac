package sdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// HealthOpening is the health status of a plugin whose open work
// (Hooks.Open) is still running. The host holds the plugin's calls, events
// and resource reads while its health says so, and shows the step in
// `cairn status` (docs/decisions.md D34).
const HealthOpening = seam.HealthOpening

// opening tracks a plugin's open work: whether it runs, the step it last
// reported and since when it runs.
type opening struct {
	mu      sync.Mutex
	running bool
	step    string
	since   time.Time
	// done is closed when the work has returned (nil before it starts).
	done   chan struct{}
	cancel context.CancelFunc
}

// open runs the Open hooks in order, reporting their steps in the
// plugin's health until they return.
func (p *Plugin) open(ctx context.Context, cfg Config) error {
	run, err := p.beginOpen(ctx, cfg)
	if run == nil {
		return err
	}
	return run()
}

// beginOpen marks the open work as running and returns what runs it (nil
// when no hook is registered). Serve marks it before it answers Configure,
// so the host's first look at the plugin's health already says "opening".
func (p *Plugin) beginOpen(ctx context.Context, cfg Config) (run func() error, err error) {
	p.mu.RLock()
	hooks := append([]func(context.Context, Config, func(string)) error(nil), p.onOpen...)
	p.mu.RUnlock()
	if len(hooks) == 0 {
		return nil, nil
	}
	o := &p.opening
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done != nil {
		return nil, errors.New("sdk: the plugin is already open")
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	o.running, o.step, o.since, o.done, o.cancel = true, "starting", time.Now(), done, cancel
	report := func(step string) {
		o.mu.Lock()
		o.step = step
		o.mu.Unlock()
	}
	return func() error {
		defer func() {
			o.mu.Lock()
			o.running, o.cancel = false, nil
			o.mu.Unlock()
			cancel()
			close(done)
		}()
		for _, h := range hooks {
			if err := h(ctx, cfg, report); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// openingHealth is the health report while the open work runs; ok is
// false once it has returned (or before it starts).
func (p *Plugin) openingHealth() (Health, bool) {
	o := &p.opening
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.running {
		return Health{}, false
	}
	elapsed := time.Since(o.since).Round(time.Second)
	return Health{
		Status:  HealthOpening,
		Message: fmt.Sprintf("opening for %s: %s", elapsed, o.step),
		Details: map[string]any{"opening": map[string]any{
			"step": o.step, "since": o.since.UTC().Format(time.RFC3339Nano), "elapsed_ms": time.Since(o.since).Milliseconds(),
		}},
	}, true
}

// awaitOpen cancels the open work and waits, within ctx, until it has
// returned, so the stop hooks never run beside it.
func (p *Plugin) awaitOpen(ctx context.Context) error {
	o := &p.opening
	o.mu.Lock()
	done, cancel := o.done, o.cancel
	o.mu.Unlock()
	if done == nil {
		return nil
	}
	if cancel != nil {
		cancel()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sdk: the plugin was still opening when it had to stop: %w", ctx.Err())
	}
}
