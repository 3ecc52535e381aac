// Package admin is the admin area plugin (Area B): it exposes the
// administration library (package admin/accounts) and the webhook manager
// (package admin/webhooks) as the "admin" toolset, delivers every host bus
// event of the webhook catalog to the webhooks subscribed to it (D19), and publishes the area's own
// events — project.created, archived, unarchived and deleted among them,
// which the core area applies to its task projects — on the bus. Inside the
// toolset it enforces workspace roles and key ownership (docs/decisions.md D22,
// authz.go), and it offers the host its API-key authenticator in the
// reserved "internal" toolset (authenticate.go).
package admin

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/admin/accounts"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/plugins/admin/webhooks"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version of the admin plugin.
const Version = "0.1.0"

// outboxFallback is when the first drain of events queued while no server
// ran happens if the host never says it is ready (sdk.EventHostReady), for
// example under a host older than that event.
const outboxFallback = 10 * time.Second

func init() {
	builtin.Register(builtin.Area{Name: "admin", Toolsets: []string{"admin"}, Order: 30, Description: "API keys, workspaces, members, invitations, projects, signed webhooks", New: New})
}

// Area holds the plugin's resources.
type Area struct {
	p      *sdk.Plugin
	mu     sync.RWMutex
	st     *store.Store
	lib    *accounts.Admin
	hooks  *webhooks.Manager
	cancel context.CancelFunc
	wg     sync.WaitGroup
	pump   chan struct{}
}

// New builds the admin plugin.
func New() *sdk.Plugin {
	p := sdk.New("admin", Version, sdk.WithDescription("API keys, workspaces, members, invitations, projects and signed webhooks"),
		sdk.WithDerivedSchemas(derivedSchemas))
	a := &Area{p: p, pump: make(chan struct{}, 1)}
	p.AddHooks(sdk.Hooks{Configure: a.configure, Stop: a.stop, Health: a.health})
	// The bus's events of the categories webhooks take, and the host's
	// ready signal; not the host's own notifications (a resource changed,
	// the prompt list changed), several per write, that no webhook takes.
	p.OnEvent(sdk.EventHostReady, a.onEvent)
	for _, c := range webhooks.Categories() {
		p.OnEvent(c+".*", a.onEvent)
	}
	a.keyTools()
	a.workspaceTools()
	a.webhookTools()
	a.internalTools()
	a.storeMigrationsTool()
	a.storeCopyTool()
	a.storeCheckTool()
	a.storeBackupTool()
	a.storeRestoreTool()
	return p
}

func (a *Area) configure(_ context.Context, cfg sdk.Config) error {
	if cfg.Settings[pgmigrate.ReadOnlySetting] == pgmigrate.ReadOnly {
		return nil // only admin_store_migrations answers; see pgmigrate.ReadOnlySetting
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return errs.Newf(500, errs.InitFailed, "cannot create data dir %s: %v", cfg.DataDir, err)
	}
	st, err := store.OpenFor(cfg.DataDir, os.Getenv(store.SettingEnv))
	if err != nil {
		return err
	}
	opts, hopts, err := settings(cfg.Settings)
	if err != nil {
		st.Close()
		return errs.Newf(400, errs.ConfigInvalid, "admin plugin settings: %s", errs.From(err).Message)
	}
	lib, err := accounts.New(st, opts)
	if err != nil {
		st.Close()
		return errs.Newf(400, errs.ConfigInvalid, "admin plugin settings: %s", errs.From(err).Message)
	}
	hopts.Development, hopts.Logger = webhooks.IsDevelopment(), a.p.Logger().Named("webhooks")
	hooks := webhooks.New(st, hopts)
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	a.st, a.lib, a.hooks, a.cancel = st, lib, hooks, cancel
	a.mu.Unlock()
	if cfg.Settings[BackgroundSetting] == "off" {
		// An operator command's short-lived host: queued events and
		// webhook deliveries wait for a server whose areas receive them.
		return nil
	}
	a.wg.Add(2)
	go func() { defer a.wg.Done(); hooks.Run(ctx) }()
	go func() { defer a.wg.Done(); a.runOutbox(ctx) }()
	return nil
}

// BackgroundSetting set to "off" runs the area without its background work
// (publishing queued events, delivering webhooks): `cairn admin …` starts
// the area for one command, and the events it causes must reach a server
// whose other areas (core registers project slugs) are listening.
const BackgroundSetting = "background"

func (a *Area) stop(context.Context) error {
	a.mu.Lock()
	cancel := a.cancel
	a.cancel = nil
	a.mu.Unlock()
	if cancel != nil {
		cancel()
		a.wg.Wait()
	}
	a.mu.RLock()
	if a.st != nil {
		a.st.Close()
	}
	a.mu.RUnlock()
	return nil
}

// settings reads the plugin's settings: key_prefix; usage_threshold (the
// share of a rate-limit window at which usage.threshold_exceeded warns: 0.8,
// 80 or 80%); webhook_hold_retention (how long a paused webhook's held
// deliveries wait, a Go duration such as 168h).
func settings(s map[string]string) (accounts.Options, webhooks.Options, error) {
	o := accounts.Options{KeyPrefix: s["key_prefix"]}
	var h webhooks.Options
	if v := s["usage_threshold"]; v != "" {
		t, err := accounts.ParseUsageThreshold(v)
		if err != nil {
			return o, h, err
		}
		o.UsageThreshold = t
	}
	if v := s["webhook_hold_retention"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return o, h, errs.Invalidf("webhook_hold_retention", "format", "webhook_hold_retention must be a duration of at least 1m such as 168h (got %q)", v)
		}
		h.HeldRetention = d
	}
	return o, h, nil
}

// parts returns the open library and manager, or a typed error before
// configuration.
func (a *Area) parts() (*accounts.Admin, *webhooks.Manager, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.lib == nil {
		return nil, nil, errs.New(503, errs.Unavailable, "the admin store is not open")
	}
	return a.lib, a.hooks, nil
}

// sweepEvery is how often runOutbox erases the secrets of recorded calls
// past store.SecretWindow and the records past their retention.
const sweepEvery = time.Minute

// runOutbox publishes the area's events on the host bus: right after an
// operation of this process (kicked), and every second for events the CLI
// queued while this process ran. It also sweeps the idempotency records.
func (a *Area) runOutbox(ctx context.Context) {
	t := time.NewTimer(outboxFallback)
	defer t.Stop()
	var swept time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(time.Second)
		case <-a.pump:
		}
		a.mu.RLock()
		st := a.st
		a.mu.RUnlock()
		if time.Since(swept) >= sweepEvery {
			// Secrets of recorded calls must not outlive their window
			// on a store that sees no keyed write to prune them.
			swept = time.Now()
			if _, err := st.SweepIdempotency(swept); err != nil && ctx.Err() == nil {
				a.p.Logger().Warn("idempotency records not swept", "error", err)
			}
		}
		if _, err := st.DrainOutbox(func(ev store.Event) error {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := a.p.Publish(pctx, ev.Type, ev.Data); err != nil {
				return err
			}
			// Publish only queues; the event leaves the outbox once the
			// host has it on its bus, so a crash here loses nothing.
			return a.p.FlushEvents(pctx)
		}); err != nil && ctx.Err() == nil {
			a.p.Logger().Warn("admin events not yet published", "error", err)
		}
	}
}

// published wakes the outbox pump after an operation that emitted events.
func (a *Area) published() {
	select {
	case a.pump <- struct{}{}:
	default:
	}
}

// onEvent queues a bus event for the webhooks subscribed to its type.
func (a *Area) onEvent(_ context.Context, ev sdk.Event) error {
	if ev.Type == sdk.EventHostReady {
		// Every area is subscribed now: publish what the CLI queued.
		a.published()
		return nil
	}
	_, hooks, err := a.parts()
	if err != nil {
		return err
	}
	return hooks.EnqueueEvent(store.Event{ID: ev.ID, Type: ev.Type, Source: ev.Source, Time: ev.Time, Data: ev.Data})
}

func (a *Area) health(context.Context) sdk.Health {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.st == nil {
		return sdk.Health{Status: "degraded", Message: "admin store is not open", Details: map[string]any{"admin_db": map[string]any{"open": false}}}
	}
	d := a.st.Describe()
	lat, err := a.st.Latency()
	db := map[string]any{"open": true, "path": d.Location, "store": d.Kind, "kind": d.Kind, "schema_version": d.SchemaVersion,
		"latency_ms": float64(lat.Microseconds()) / 1000}
	if err != nil {
		return sdk.Health{Status: "degraded", Message: fmt.Sprintf("admin store did not answer: %v", err), Details: map[string]any{"admin_db": db}}
	}
	return sdk.Health{Status: "ok", Details: map[string]any{"admin_db": db}}
}
