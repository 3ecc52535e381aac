// Package sdd is the spec-driven development area plugin (Area C): the ten
// sdd_ tools, the sdd:// resources and the sdd.* events. It wires the domain
// package (plugins/sdd/engine) to the SDK and nothing more.
//
// Files (docs/decisions.md D2): state in <datadir>/state/sdd-state.json, command
// files in <root>/.agents/commands/<id>.md and agent files in
// <root>/.agents/agents/<id>.md (bundled defaults when absent), plans in
// <root>/.planning/PLAN-phase-<N>.md.
package sdd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/plugins/sdd/engine"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version of the sdd plugin.
const Version = "0.1.0"

// Toolset is the toolset of every sdd tool (docs/decisions.md D16).
const Toolset = "sdd"

// ResourcePrefix is the scheme of the sdd resources.
const ResourcePrefix = "sdd://"

func init() {
	builtin.Register(builtin.Area{Name: "sdd", Toolsets: []string{Toolset}, Order: 20, Description: "spec-driven development: plans, leases, spawn rules, state, evolution", New: New})
}

// Area is the sdd area: its plugin and its engine, which exists once
// the host has configured the plugin.
type Area struct {
	p   *sdk.Plugin
	mu  sync.RWMutex
	eng *engine.Engine
}

// New builds the sdd plugin.
func New() *sdk.Plugin {
	p := sdk.New("sdd", Version,
		sdk.WithDescription("Spec-driven development: phase plans, leases, spawn rules and queue, state, evolution"),
		sdk.WithToolset(Toolset), sdk.WithDerivedSchemas(derivedSchemas))
	s := &Area{p: p}
	p.AddHooks(sdk.Hooks{Configure: s.configure, Stop: s.stop, Health: s.health})
	s.registerTools()
	s.registerGateTools()
	s.registerResources()
	s.registerPrompts()
	s.registerCompletions()
	s.storeMigrationsTool()
	s.storeCopyTool()
	s.storeCheckTool()
	s.storeBackupTool()
	s.storeRestoreTool()
	return p
}

// configure opens the engine and loads the state before any tool call, as
// the specification's initialize requires.
func (s *Area) configure(_ context.Context, cfg sdk.Config) error {
	if cfg.Settings[pgmigrate.ReadOnlySetting] == pgmigrate.ReadOnly {
		return nil // only sdd_store_migrations answers; see pgmigrate.ReadOnlySetting
	}
	eng, err := engine.New(engine.Config{Root: cfg.Root, DataDir: cfg.DataDir, Publish: s.publish, Log: s.p.Logger().Warn, Store: os.Getenv("CAIRN_STORE")})
	if err != nil {
		return errs.Newf(500, errs.InitFailed, "sdd: %v", errs.From(err).Message)
	}
	if _, err := eng.Initialize(); err != nil {
		return errs.Newf(500, errs.InitFailed, "sdd: %v", errs.From(err).Message)
	}
	if h := eng.Health(); h.Recovery != nil {
		s.p.Logger().Warn("sdd state file was corrupt and has been set aside", "moved_to", h.Recovery.MovedTo, "error", h.Recovery.Error)
	}
	s.mu.Lock()
	s.eng = eng
	s.mu.Unlock()
	s.p.Logger().Debug("sdd engine ready", "state", eng.StatePath(), "planning_root", eng.PlanningRoot())
	return nil
}

// engine returns the engine or a typed error before configuration.
func (s *Area) engine() (*engine.Engine, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.eng == nil {
		return nil, errs.New(503, errs.Unavailable, "the sdd engine is not configured yet; retry in a moment")
	}
	return s.eng, nil
}

// publish hands one event of the engine's outbox to the host bus under its
// recorded id and time; done hears when every other area's handler has
// returned (sdk.Plugin.PublishDurable). An event the host refuses as
// malformed is dropped with a log line: publishing it again would be
// refused again.
func (s *Area) publish(ev engine.Event, done func(error)) error {
	return s.p.PublishDurable(sdk.Event{ID: ev.ID, Type: ev.Type, Time: ev.Time, Data: ev.Data}, func(err error) {
		if errors.Is(err, sdk.ErrEventRefused) {
			s.p.Logger().Error("sdd event refused by the host; dropped", "event", ev.Type, "id", ev.ID, "error", err)
			err = nil
		}
		done(err)
	})
}

// stop waits for the host's answers to the events already published, so
// the handled ones leave the state, then ends the engine's event
// publication (what is not handled stays in the state for the next start)
// and closes its store.
func (s *Area) stop(ctx context.Context) error {
	s.mu.Lock()
	eng := s.eng
	s.eng = nil
	s.mu.Unlock()
	if eng == nil {
		return nil
	}
	if err := s.p.FlushEvents(ctx); err != nil {
		s.p.Logger().Warn("sdd events not answered before stop; the next start publishes them again", "error", err)
	}
	eng.Close()
	return nil
}

// health is degraded when a corrupt state file had to be set aside, or
// while events wait in the state after some had to be shed (the host has
// not been handling them); a stale project is reported by sdd_vitals,
// sdd_dash and sdd_evolve instead, because an idle workflow is not a fault
// of the server.
func (s *Area) health(context.Context) sdk.Health {
	eng, err := s.engine()
	if err != nil {
		return sdk.Health{Status: "degraded", Message: errs.From(err).Message}
	}
	h := eng.Health()
	kind, version := eng.StoreVersion()
	sdd := map[string]any{"state_path": eng.StatePath(), "planning_root": eng.PlanningRoot(), "store": kind, "schema_version": version}
	details := map[string]any{"sdd": sdd}
	var problems []string
	if h.Recovery != nil {
		for _, p := range h.Problems {
			if strings.Contains(p, h.Recovery.MovedTo) {
				problems = append(problems, p)
			}
		}
	}
	pending, shed, err := eng.PendingEvents()
	switch {
	case err != nil:
		problems = append(problems, "sdd events not counted: "+errs.From(err).Message)
	default:
		sdd["pending_events"], sdd["events_shed"] = pending, shed
		if shed > 0 && pending > 0 {
			problems = append(problems, fmt.Sprintf("%d sdd events wait for the host to handle them, and %d older ones were dropped to keep the state within its bounds", pending, shed))
		}
	}
	if len(problems) == 0 {
		return sdk.Health{Status: "ok", Details: details}
	}
	details["problems"] = problems
	return sdk.Health{Status: "degraded", Message: strings.Join(problems, "; "), Details: details}
}
