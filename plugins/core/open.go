package core

import (
	"context"
	"os"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/skills"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk"
)

// opened is what configure opened and open makes the area serve from.
type opened struct {
	store  *store.Store
	skills *skills.Registry
}

// OpenHoldEnv names a file the core area's open waits for before it does
// anything: end-to-end tests hold an open that way, for as long as they
// need to watch a session wait for it. Unset, the open does not wait.
const OpenHoldEnv = "CAIRN_CORE_OPEN_HOLD"

// open does what may take long before the area serves (docs/decisions.md
// D34): the indexes an older store lacks, the index entries an earlier
// process left pending (100,000 imported tasks' took 20-45 s), an import a
// crash interrupted (D41), then the session's project. It runs after the
// host has configured the area; meanwhile the area's health says
// "opening" with the step report last named, and the host holds its calls
// and events, so the import is complete before anything else writes.
func (c *Area) open(ctx context.Context, _ sdk.Config, report func(step string)) error {
	c.mu.RLock()
	o := c.opened
	c.mu.RUnlock()
	if o == nil {
		return nil // a command's host that does not open the store
	}
	if err := holdOpen(ctx, report); err != nil {
		return err
	}
	st := o.store
	aud := audit.New(st, audit.Config{Publish: c.committed, Record: recordEventIn(st)})
	svc := tasks.New(st, tasks.Config{Publish: c.committed, Record: recordEventIn(st), OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail, ImportedText: aud.ImportedText, Decision: aud.ApprovalDecision, Opening: report})
	if err := svc.IndexError(); err != nil {
		c.p.Logger().Warn("task search index not built; search scans every task", "error", err)
	}
	// An import a crash interrupted is completed before anything else
	// writes (docs/decisions.md D41).
	report("completing an import a crash interrupted, if any")
	if n, err := svc.ResumeImport(); err != nil {
		c.p.Logger().Error("interrupted import not completed; it is retried on the next start", "error", err)
	} else if n > 0 {
		c.p.Logger().Info("completed an interrupted import", "tasks", n)
	}
	if slug := os.Getenv("CAIRN_PROJECT"); slug != "" {
		report("registering the project " + slug)
		if _, err := svc.AddProject(slug); err != nil {
			_ = svc.Close()
			return err
		}
	}
	c.mu.Lock()
	c.store, c.tasks, c.audit, c.skills, c.active = st, svc, aud, o.skills, os.Getenv("CAIRN_PROJECT")
	c.mu.Unlock()
	c.startDrainer(st)
	c.watchSkills(o.skills)
	return nil
}

// holdOpen waits until the file OpenHoldEnv names exists, when it names
// one, or until ctx ends (the plugin is stopping).
func holdOpen(ctx context.Context, report func(step string)) error {
	path := os.Getenv(OpenHoldEnv)
	if path == "" {
		return nil
	}
	report("held until " + path + " exists (" + OpenHoldEnv + ")")
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Lstat(path); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
