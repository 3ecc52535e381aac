package resume

import (
	"time"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/leases"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// NextLimit is how many of the project's next actions the brief offers.
const NextLimit = 5

// Input is task_context's input once the plugin has resolved the caller
// and the project (which may stay empty: then there are no next actions).
type Input struct {
	Agent    string
	Project  string
	MaxBytes *int
}

// Sources are what the brief reads: the core store, whose tasks, chains
// and lease mirror it views in one read transaction, and the clock that
// decides which leases have expired.
type Sources struct {
	Store *store.Store
	Now   func() time.Time
}

// Build gathers the caller's brief and packs it (docs/decisions.md D39).
// Every read goes through an index of the caller's own records — the
// assignee facet, each task's chain head, the lease mirror by task, the
// project's ready list — so its cost follows what the caller holds, not
// the store's size.
func Build(src Sources, in Input) (Brief, error) {
	maxBytes := DefaultMaxBytes
	if in.MaxBytes != nil {
		maxBytes = *in.MaxBytes
		if maxBytes < MinMaxBytes {
			return Brief{}, errs.Invalidf("max_bytes", "minimum", "max_bytes must be at least %d", MinMaxBytes)
		}
		if maxBytes > MaxMaxBytes {
			return Brief{}, errs.Invalidf("max_bytes", "maximum", "max_bytes must be at most %d", MaxMaxBytes)
		}
	}
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	var p Parts
	// One read transaction for every part, so the brief is one snapshot:
	// a decision or a claim committed meanwhile is in all of it or none.
	err := tasks.ViewSettled(src.Store, func(tx kv.Tx) error {
		var err error
		p, err = gather(tx, in, now())
		return err
	})
	if err != nil {
		return Brief{}, errs.From(err)
	}
	return Pack(p, maxBytes), nil
}

// gather reads the brief's parts inside tx.
func gather(tx kv.Tx, in Input, now time.Time) (Parts, error) {
	mine, open, err := tasks.MineIn(tx, in.Agent)
	if err != nil {
		return Parts{}, err
	}
	p := Parts{Agent: in.Agent, Project: in.Project, OpenTasks: open, Tasks: make([]Task, 0, len(mine))}
	ids := make([]string, 0, len(mine))
	nums := make([]uint64, 0, len(mine))
	for _, m := range mine {
		num, _ := tasks.ParseTaskID(m.TaskID)
		ids, nums = append(ids, m.TaskID), append(nums, num)
	}
	tails, err := audit.LatestIn(tx, nums, DecisionsPerTask)
	if err != nil {
		return Parts{}, err
	}
	for i, m := range mine {
		last := tails[i]
		t := Task{MineTask: m, Decisions: make([]Decision, 0, len(last.Thoughts)), Blockers: last.Blockers, Trail: trailURI + m.TaskID}
		for _, th := range last.Thoughts {
			t.Decisions = append(t.Decisions, Decision{ThoughtID: th.ThoughtID, Type: th.Type, Content: clip(th.Content), RecordedAt: th.RecordedAt})
		}
		p.Tasks = append(p.Tasks, t)
	}
	if p.Leases, err = leases.ForTasksIn(tx, ids, now); err != nil {
		return Parts{}, err
	}
	if in.Project != "" {
		next, err := tasks.NextActionsIn(tx, in.Project, NextLimit)
		if e, ok := errs.As(err); ok && e.Status == 404 {
			// A project that does not exist (yet) has no next actions.
			p.Project, err = "", nil
		}
		if err != nil {
			return Parts{}, err
		}
		p.NextActions = next.NextActions
	}
	return p, nil
}

// clip shortens content to ContentRunes runes, marking the cut.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= ContentRunes {
		return s
	}
	r := []rune(s)
	return string(r[:ContentRunes-1]) + "…"
}
