package sdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TaskSupport says whether a tool may run as an MCP task: the client gets
// a task id at once and polls for the result, which outlives the client's
// connection and the plugin's process (docs/decisions.md D39). Declare it
// on tools that can run for minutes; tools that always finish quickly stay
// plain calls.
type TaskSupport string

const (
	// TaskOptional: the client chooses a task or a plain call.
	TaskOptional TaskSupport = "optional"
)

// MCP task lifetimes: the default when the client asks for none, and the
// longest kept (a longer ttl is shortened to it).
const (
	DefaultTaskTTL = time.Hour
	MaxTaskTTL     = 24 * time.Hour
	TaskPollEvery  = time.Second
	taskPageSize   = 50
)

// interruptedMessage is the status message of a task whose process ended
// while it was working: nothing of it survives but its record.
const interruptedMessage = "interrupted: the plugin stopped while the task was working (the daemon or the plugin restarted), so it has no result; start it again"

// taskOwner is whom a task belongs to: an API key's user, or the local
// operator, who holds every right (docs/decisions.md D22) and reconnects
// under a new session after a restart, so its tasks are not tied to one
// session.
func taskOwner(c Caller) string {
	if c.Source == "api_key" {
		return "api_key:" + c.ID
	}
	return "local"
}

// tasks is a plugin's task book: the records on disk and the handlers
// running in this process.
type tasks struct {
	plugin string
	files  taskFiles
	log    hclog.Logger
	now    func() time.Time

	mu      sync.Mutex
	running map[string]*runningTask
	// stopping: the process is ending; handlers cancelled by it leave
	// their tasks working on disk, for the next start to report
	// interrupted.
	stopping bool
}

type runningTask struct {
	cancel context.CancelFunc
	done   chan struct{}
	// lastSaved throttles progress writes.
	lastSaved time.Time
}

// openTasks opens the book under dataDir. A task still working on disk
// belonged to a process that has ended: it is failed as interrupted. An
// expired one is deleted.
func openTasks(plugin, dataDir string, log hclog.Logger, now func() time.Time) (*tasks, error) {
	dir := filepath.Join(dataDir, "tasks", plugin)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sdk: the task directory %s cannot be created: %w", dir, err)
	}
	b := &tasks{plugin: plugin, files: taskFiles{dir: dir}, log: log, now: now, running: map[string]*runningTask{}}
	recs, err := b.files.all(b.skipCorrupt)
	if err != nil {
		return nil, fmt.Errorf("sdk: the task directory %s cannot be read: %w", dir, err)
	}
	t := now()
	for _, r := range recs {
		switch {
		case r.expired(t):
			b.files.remove(plugin, r.ID)
		case r.Status == TaskWorking:
			r.Status, r.StatusMessage, r.Interrupted, r.UpdatedAt = TaskFailed, interruptedMessage, true, t
			e := errs.New(503, errs.Unavailable, interruptedMessage).With("taskId", r.ID)
			r.Result = &taskResult{Err: e, Status: e.Status}
			if err := b.files.save(plugin, r); err != nil {
				return nil, fmt.Errorf("sdk: task %s cannot be marked interrupted: %w", r.ID, err)
			}
		}
	}
	return b, nil
}

func (b *tasks) skipCorrupt(name string, err error) {
	b.log.Warn("task record skipped", "file", name, "error", err)
}

func newTaskID(plugin string) string {
	var buf [16]byte
	_, _ = rand.Read(buf[:])
	return plugin + "." + hex.EncodeToString(buf[:])
}

// start records a working task for a call of tool with args and runs it in
// the background; the record is on disk before start returns, so a poll
// for the id always finds it.
func (b *tasks) start(caller Caller, tool string, ttl time.Duration, run func(ctx context.Context) Result) (*taskRecord, *errs.Error) {
	owner := taskOwner(caller)
	switch {
	case ttl <= 0:
		ttl = DefaultTaskTTL
	case ttl > MaxTaskTTL:
		ttl = MaxTaskTTL
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.makeRoomLocked(owner); e != nil {
		return nil, e
	}
	t := b.now()
	r := &taskRecord{
		ID: newTaskID(b.plugin), Tool: tool, Owner: owner, Status: TaskWorking,
		StatusMessage: "The tool is running.", CreatedAt: t, UpdatedAt: t, TTL: ttl, PollInterval: TaskPollEvery,
	}
	if err := b.files.save(b.plugin, r); err != nil {
		return nil, errs.Newf(500, errs.Internal, "the task could not be recorded: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = WithCaller(ctx, caller)
	rt := &runningTask{cancel: cancel, done: make(chan struct{})}
	b.running[r.ID] = rt
	ctx = WithProgress(ctx, func(progress, total float64, message string) { b.progress(r.ID, progress, total, message) })
	go func() {
		defer cancel()
		res := run(ctx)
		b.finish(r.ID, res)
	}()
	return r, nil
}

// progress keeps a working task's latest progress report as its status
// message, written at most once a second (the last report before the end
// is superseded by the result anyway).
func (b *tasks) progress(id string, progress, total float64, message string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rt := b.running[id]
	t := b.now()
	if rt == nil || t.Sub(rt.lastSaved) < time.Second {
		return
	}
	r, e := b.loadLocked(id)
	if e != nil || r.terminal() {
		return
	}
	r.Progress, r.Total, r.UpdatedAt = progress, total, t
	switch {
	case message != "":
		r.StatusMessage = message
	case total > 0:
		r.StatusMessage = fmt.Sprintf("%g of %g done", progress, total)
	default:
		r.StatusMessage = fmt.Sprintf("%g done", progress)
	}
	if err := b.files.save(b.plugin, r); err != nil {
		b.log.Warn("task progress not recorded", "task", id, "error", err)
		return
	}
	rt.lastSaved = t
}

// finish records the tool's result. A task cancelled meanwhile stays
// cancelled, with the result its handler returned.
func (b *tasks) finish(id string, res Result) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rt := b.running[id]
	delete(b.running, id)
	if rt != nil {
		defer close(rt.done)
	}
	if b.stopping {
		return
	}
	r, e := b.loadLocked(id)
	if e != nil {
		b.log.Warn("finished task has no record", "task", id, "error", e.Message)
		return
	}
	r.UpdatedAt = b.now()
	r.Result = &taskResult{Output: res.Output, Err: res.Err, Status: res.Status, Content: res.Content}
	switch {
	case r.Status == TaskCancelled:
	case res.Err != nil:
		r.Status, r.StatusMessage = TaskFailed, res.Err.Code+": "+res.Err.Message
	default:
		r.Status, r.StatusMessage = TaskCompleted, "The tool finished."
	}
	if err := b.files.save(b.plugin, r); err != nil {
		b.log.Error("task result not recorded", "task", id, "error", err)
	}
}

// loadLocked reads task id; b.mu is held.
func (b *tasks) loadLocked(id string) (*taskRecord, *errs.Error) {
	path, ok := b.files.path(b.plugin, id)
	if !ok {
		return nil, taskNotFound(id)
	}
	r, err := b.files.load(path)
	if err != nil {
		return nil, taskNotFound(id)
	}
	if r.expired(b.now()) {
		b.files.remove(b.plugin, id)
		return nil, errs.NotFoundf(errs.NotFound, "taskId", "task %s has expired (its ttl elapsed)", id)
	}
	return r, nil
}

func taskNotFound(id string) *errs.Error {
	return errs.NotFoundf(errs.NotFound, "taskId", "task %s not found: it was never issued to you, it expired, or it ended and was dropped as one of your oldest beyond the %d task records kept for one caller", id, maxOwnerTasks)
}

// get returns owner's task id. Another owner's task is not found, as if it
// did not exist (docs/decisions.md D22).
func (b *tasks) get(owner, id string) (*taskRecord, *errs.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.getLocked(owner, id)
}

func (b *tasks) getLocked(owner, id string) (*taskRecord, *errs.Error) {
	r, e := b.loadLocked(id)
	if e != nil {
		return nil, e
	}
	if r.Owner != owner {
		return nil, taskNotFound(id)
	}
	return r, nil
}

// list returns one page of owner's tasks, oldest first, after cursor (the
// id that ended the previous page).
func (b *tasks) list(owner, cursor string) ([]*taskRecord, string, *errs.Error) {
	b.mu.Lock()
	recs, err := b.files.all(b.skipCorrupt)
	b.mu.Unlock()
	if err != nil {
		return nil, "", errs.Newf(500, errs.Internal, "the tasks cannot be read: %v", err)
	}
	t := b.now()
	mine := recs[:0]
	for _, r := range recs {
		if r.Owner == owner && !r.expired(t) {
			mine = append(mine, r)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		if !mine[i].CreatedAt.Equal(mine[j].CreatedAt) {
			return mine[i].CreatedAt.Before(mine[j].CreatedAt)
		}
		return mine[i].ID < mine[j].ID
	})
	from := 0
	if cursor != "" {
		from = -1
		for i, r := range mine {
			if r.ID == cursor {
				from = i + 1
				break
			}
		}
		if from < 0 {
			return nil, "", errs.Invalid("cursor", "known", "the cursor is not one a previous tasks/list returned, or its task has expired")
		}
	}
	page := mine[from:]
	next := ""
	if len(page) > taskPageSize {
		page = page[:taskPageSize]
		next = page[len(page)-1].ID
	}
	return page, next, nil
}

// cancel moves owner's working task id to cancelled and stops its handler
// through its context. A task already ended cannot be cancelled.
func (b *tasks) cancel(owner, id string) (*taskRecord, *errs.Error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, e := b.getLocked(owner, id)
	if e != nil {
		return nil, e
	}
	if r.terminal() {
		return nil, errs.Newf(409, errs.InvalidTransition, "cannot cancel task %s: already in terminal status '%s'", id, r.Status).
			With("field", "taskId").With("constraint", "working")
	}
	r.Status, r.StatusMessage, r.UpdatedAt = TaskCancelled, "The task was cancelled by request.", b.now()
	if err := b.files.save(b.plugin, r); err != nil {
		return nil, errs.Newf(500, errs.Internal, "the cancellation could not be recorded: %v", err)
	}
	if rt := b.running[id]; rt != nil {
		rt.cancel()
	}
	return r, nil
}

// result waits until owner's task id has ended and its handler has
// returned (a cancelled task's handler stops on its own time), or ctx
// ends, and returns it.
func (b *tasks) result(ctx context.Context, owner, id string) (*taskRecord, *errs.Error) {
	b.mu.Lock()
	r, e := b.getLocked(owner, id)
	rt := b.running[id]
	b.mu.Unlock()
	if e != nil || rt == nil {
		return r, e
	}
	select {
	case <-rt.done:
	case <-ctx.Done():
		return nil, errs.New(499, errs.Cancelled, "the wait for the task's result was cancelled: "+ctx.Err().Error())
	}
	return b.get(owner, id)
}

// working returns the tasks whose handlers run in this process and whose
// records still say working (a cancelled one may still be stopping).
func (b *tasks) working() []*taskRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*taskRecord
	for id := range b.running {
		if r, e := b.loadLocked(id); e == nil && r.Status == TaskWorking {
			out = append(out, r)
		}
	}
	return out
}

// stop cancels every handler still running (the process is stopping);
// their tasks are left working on disk, and the next start reports them
// interrupted.
func (b *tasks) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopping = true
	for _, rt := range b.running {
		rt.cancel()
	}
}
