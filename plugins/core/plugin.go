// Package core is the core area plugin (Area A): the task pipeline, the
// projects it files tasks under, and the live skill registry. It wires the
// domain packages (store, tasks, skills) to the SDK and nothing more.
package core

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"os"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/plugins/builtin"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Version of the core plugin.
const Version = "0.1.0"

// StoreFile is the core store's file name inside the data dir.
const StoreFile = store.FileName

// ProjectCreatedEvent is published by the admin area when a workspace
// project is created (and by the host when a session starts, for its
// active project); its data carries the project's "slug".
const ProjectCreatedEvent = "project.created"

// Workspace project lifecycle events of the admin area, same data shape as
// ProjectCreatedEvent: an archived project takes no new tasks, a
// deleted one is unknown.
const (
	ProjectArchivedEvent   = "project.archived"
	ProjectUnarchivedEvent = "project.unarchived"
	ProjectDeletedEvent    = "project.deleted"
)

func init() {
	builtin.Register(builtin.Area{Name: "core", Toolsets: []string{"core"}, Order: 10, Description: "tasks, projects, skills, decision trail", New: New})
}

// bucketLastProject remembers, per caller, the project they used last (D7).
var bucketLastProject = []byte(store.BucketLastProject)

// Area is the core area: its plugin and its open resources.
type Area struct {
	p      *sdk.Plugin
	mu     sync.RWMutex
	store  *store.Store
	tasks  *tasks.Service
	audit  *audit.Service
	skills *skills.Registry
	active string // CAIRN_PROJECT
	// drainStop ends the drainer of the store's event outbox.
	drainStop func()
	// opened holds what configure opened until open has made the area
	// serve from it (open.go); stop closes it if open never did.
	opened *opened
}

// New builds the core plugin.
func New() *sdk.Plugin {
	p := sdk.New("core", Version, sdk.WithDescription("Task pipeline, projects, skill registry and decision trail"),
		sdk.WithDerivedSchemas(derivedSchemas))
	c := &Area{p: p}
	p.AddHooks(sdk.Hooks{Configure: c.configure, Open: c.open, Stop: c.stop, Health: c.health})
	p.OnEvent(ProjectCreatedEvent, c.onProjectEvent)
	p.OnEvent(ProjectArchivedEvent, c.onProjectEvent)
	p.OnEvent(ProjectUnarchivedEvent, c.onProjectEvent)
	p.OnEvent(ProjectDeletedEvent, c.onProjectEvent)
	c.registerTaskTools()
	c.registerContextTool()
	c.registerAuditTools()
	c.registerOperatorTools()
	c.registerApprovalTools()
	c.registerImportTools()
	c.registerSkillTools()
	c.registerResources()
	c.registerPrompts()
	c.registerSkillResources()
	c.registerCompletions()
	c.storeCopyTool()
	c.storeMigrationsTool()
	c.storeCheckTool()
	c.storeBackupTool()
	c.storeRestoreTool()
	return p
}

func (c *Area) configure(ctx context.Context, cfg sdk.Config) error {
	if cfg.Settings[pgmigrate.ReadOnlySetting] == pgmigrate.ReadOnly {
		// A command's host that must not open the store (`cairn store
		// copy` reads it itself, `cairn migrate status` applies nothing):
		// only core_store_copy and core_store_migrations answer.
		return nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return errs.Newf(500, errs.InitFailed, "cannot create data dir %s: %v", cfg.DataDir, err)
	}
	// What can refuse a start at once — a store another process holds, a
	// bad CAIRN_STORE, an unreadable skill folder — is checked here; the
	// work that may take long runs in open, after the host has its answer.
	st, err := store.OpenFor(cfg.DataDir, os.Getenv(store.SettingEnv))
	if err != nil {
		return err
	}
	reg, err := skills.Open(cfg.Root, func(msg string, kv ...any) { c.p.Logger().Warn(msg, kv...) })
	if err != nil {
		_ = st.Close()
		return errs.Newf(500, errs.InitFailed, "skill registry: %v", err)
	}
	c.mu.Lock()
	c.opened = &opened{store: st, skills: reg}
	c.mu.Unlock()
	return nil
}

func (c *Area) stop(context.Context) error {
	c.stopDrainer()
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	if o := c.opened; o != nil && c.store == nil {
		// Configured, never open (its open failed): nothing serves from
		// these yet.
		first = o.skills.Close()
		if err := o.store.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.opened = nil
	if c.skills != nil {
		first = c.skills.Close()
		c.skills = nil
	}
	if c.tasks != nil {
		// Writes the search postings still pending into the store.
		if err := c.tasks.Close(); err != nil && first == nil {
			first = err
		}
	}
	if c.store != nil {
		if err := c.store.Close(); err != nil && first == nil {
			first = err
		}
		c.store, c.tasks, c.audit = nil, nil, nil
	}
	return first
}

// svc returns the task service or a typed error before configuration.
func (c *Area) svc() (*tasks.Service, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.tasks == nil {
		return nil, errs.New(503, errs.Unavailable, "the core store is not open")
	}
	return c.tasks, nil
}

// storeIsLocal reports whether the open store is a bbolt file (false
// before it opens).
func (c *Area) storeIsLocal() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.store != nil && c.store.Local()
}

// publishTimeout bounds one notice to the host.
const publishTimeout = 5 * time.Second

func (c *Area) onProjectEvent(_ context.Context, ev sdk.Event) error {
	var data struct {
		Slug string `json:"slug"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Slug == "" {
		return fmt.Errorf("%s event without a slug", ev.Type)
	}
	svc, err := c.svc()
	if err != nil {
		return err
	}
	switch ev.Type {
	case ProjectArchivedEvent:
		_, err = svc.SetProjectArchived(data.Slug, true)
	case ProjectUnarchivedEvent:
		_, err = svc.SetProjectArchived(data.Slug, false)
	case ProjectDeletedEvent:
		err = svc.DeleteProject(data.Slug)
	default:
		_, err = svc.AddProject(data.Slug)
	}
	return err
}

// health reports the store (D15's db block) and malformed skill files.
func (c *Area) health(context.Context) sdk.Health {
	c.mu.RLock()
	defer c.mu.RUnlock()
	h := sdk.Health{Status: "ok", Details: map[string]any{}}
	db := map[string]any{"open": false, "user_version": 0, "path": "", "kind": ""}
	if c.store != nil {
		d := c.store.Describe()
		db = map[string]any{"open": true, "user_version": c.store.UserVersion(), "path": d.Location, "kind": d.Kind}
		if d.Kind == "postgres" {
			db["migration_version"] = d.Migration
		}
		// One trivial read, timed: what a request pays before its own work.
		lat, err := c.store.Latency()
		db["latency_ms"] = float64(lat.Microseconds()) / 1000
		if err != nil {
			h.Status, h.Message = "degraded", fmt.Sprintf("core store did not answer: %v", err)
		}
	} else {
		h.Status, h.Message = "degraded", "core store is not open"
	}
	h.Details["db"] = db
	var problems []string
	if c.store != nil {
		// Damage bbolt survived at open (a meta page it fell back from):
		// every session's relay prints it.
		for _, w := range c.store.Warnings() {
			problems = append(problems, "store "+w.String()+"; run `cairn store check`, and `cairn restore <backup dir>` if the last writes are missing")
		}
		if len(problems) > 0 {
			h.Status, h.Message = "degraded", "the core store's file is damaged"
		}
		// Commits are safe in the journal, but the file falls behind it.
		if err := c.store.CheckpointErr(); err != nil {
			problems = append(problems, fmt.Sprintf("store checkpoint failed: %v; commits wait in core.db-journal-* until one succeeds (check the disk)", err))
			h.Status, h.Message = "degraded", "the core store cannot write its file"
		}
	}
	if c.skills != nil {
		for _, pr := range c.skills.Problems() {
			problems = append(problems, fmt.Sprintf("skill file %s skipped: %s", pr.Path, pr.Error))
		}
		if n := len(c.skills.Problems()); n > 0 {
			h.Status, h.Message = "degraded", fmt.Sprintf("%d malformed skill file(s)", n)
		}
	}
	if len(problems) > 0 {
		h.Details["problems"] = problems
	}
	return h
}

// rememberProject records the project a caller used, for task_next_actions
// without a project (D7). It reads first and opens a write transaction only
// when the remembered project changes, so reads stay reads.
func (c *Area) rememberProject(caller, project string) {
	c.mu.RLock()
	st := c.store
	c.mu.RUnlock()
	if st == nil || project == "" {
		return
	}
	if c.lastProject(caller) == project {
		return
	}
	_ = st.Commit(func(tx kv.Tx) error {
		b := tx.Bucket(bucketLastProject)
		if string(b.Get([]byte(caller))) == project {
			return nil
		}
		return b.Put([]byte(caller), []byte(project))
	})
}

func (c *Area) lastProject(caller string) string {
	c.mu.RLock()
	st := c.store
	c.mu.RUnlock()
	if st == nil {
		return ""
	}
	var out string
	_ = st.View(func(tx kv.Tx) error {
		out = string(tx.Bucket(bucketLastProject).Get([]byte(caller)))
		return nil
	})
	return out
}

// call builds the domain's view of the caller of ctx.
func call(ctx context.Context) tasks.Call {
	caller := sdk.CallerFrom(ctx)
	return tasks.Call{Actor: caller.ID, Project: caller.Project, Idem: sdk.IdempotencyOf(ctx), TraceID: sdk.TraceID(ctx)}
}
