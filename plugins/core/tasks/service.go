// Package tasks is the domain of the Area A task pipeline: projects, tasks,
// the task state machine, task_list and task_next_actions. It knows nothing
// of MCP or gRPC; the core plugin wires its inputs and outputs (whose JSON
// tags are the specification's field names) to the task_* tools.
//
// Every error it returns is an *errs.Error carrying the specification's code
// and status. Writes are one bbolt transaction each, and the OnChange hook
// runs inside that transaction so the decision trail can append to its hash
// chains atomically with the task change.
package tasks

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Change kinds passed to Config.OnChange; they are also the event-chain
// record kinds of D11.
const (
	ChangeCreated = "task_created"
	ChangeUpdated = "task_updated"
)

// Event types passed to Config.Publish (D19).
const (
	EventCreated = "task.created"
	EventUpdated = "task.updated"
)

// UnknownActor stands in for an empty actor (D4's last fallback).
const UnknownActor = "unknown"

// Change describes one committed-to-be task write for the OnChange hook.
type Change struct {
	// TaskID is the task's id ("T-12").
	TaskID string
	// Num is the task's number (12 for "T-12").
	Num uint64
	// Kind is ChangeCreated or ChangeUpdated.
	Kind string
	// Actor is who made the change (created_by / updated_by).
	Actor string
	// At is the change time in D5 form, equal to the task's updated_at.
	At string
	// Data is the change as JSON-able values: every field of a created task,
	// or the changed fields (new values) plus previous_status when the
	// status moved.
	Data map[string]any
	// TraceID is the trace of the call that made the change (empty:
	// untraced); kept beside its event record, outside the hash.
	TraceID string
}

// Config wires a Service to its surroundings. Every field is optional.
type Config struct {
	// Clock returns the current time; tests inject a fixed clock.
	Clock func() time.Time
	// Publish is called after a write commits, with EventCreated or
	// EventUpdated and a map of the event fields. It must not block long.
	// With Record set, the events are already recorded: Publish only tells
	// that they await publication.
	Publish func(eventType string, data any)
	// Record, when set, records each event inside the transaction of the
	// write that causes it (the store's outbox), so a committed
	// write's event survives a crash before its publication.
	Record func(tx kv.Tx, eventType string, data map[string]any, at time.Time) error
	// OnChange runs inside the write transaction of Create and Update. An
	// error aborts the whole write, so the task change and whatever the
	// hook appends commit together or not at all.
	OnChange func(tx kv.Tx, change Change) error
	// ThoughtTrail returns the thought trail task_get shows with
	// include_thought_trail. Nil means an empty trail.
	ThoughtTrail func(tx kv.Tx, taskID string) ([]string, error)
	// ImportedText keeps the whole of an imported text its field could
	// not hold (docs/decisions.md D41): it appends it to task num's
	// thought trail in tx, in as many records as the trail's limit takes,
	// and returns the events of type eventType to publish once tx
	// commits. Nil: such a text breaks task_create's limit, and its task
	// is skipped (or, strict, the import refused).
	ImportedText func(tx kv.Tx, num uint64, field, text, actor string) (eventType string, events []map[string]any, err error)
	// Decision links a person's approval decision into task d.Num's
	// thought trail in tx, as a "decision" record (docs/decisions.md
	// D45), and returns its id and the event to publish once tx commits
	// (already recorded, as ImportedText's are). Nil: the decision is
	// kept with the task only.
	Decision func(tx kv.Tx, d DecisionRecord) (thoughtID, eventType string, event map[string]any, err error)
	// Opening, when set, hears what New is doing while it builds indexes
	// or writes what an earlier process left pending: the core area's
	// health shows it while the area opens (docs/decisions.md D34).
	Opening func(step string)
}

// Service runs the task pipeline over a core store. It is safe for
// concurrent use; bbolt serializes its writes.
type Service struct {
	st  *store.Store
	cfg Config
	// indexErr is why an index could not be built on open; the queries it
	// serves then scan, which is slower but answers the same.
	indexErr error
	// flusher writes deferred search postings (searchpending.go).
	flusher trigramFlusher
}

// New returns a Service over st, building the indexes an older store lacks.
func New(st *store.Store, cfg Config) *Service {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	s := &Service{st: st, cfg: cfg}
	s.opening("building the search index if this store lacks it")
	s.indexErr = s.ensureSearchIndex()
	// Postings and list entries a server left pending when it stopped
	// (an import's, when its process was stopped before its flusher was
	// done) are written now, in bulk: no call waits behind them yet.
	if err := s.flushBulk(s.opening); err != nil && s.indexErr == nil {
		s.indexErr = err
	}
	if err := s.foldShards(); err != nil && s.indexErr == nil {
		s.indexErr = err
	}
	s.opening("building the task_list indexes if this store lacks them")
	if err := s.ensureListIndexes(); err != nil && s.indexErr == nil {
		s.indexErr = err
	}
	return s
}

// opening tells Config.Opening what New is doing.
func (s *Service) opening(step string) {
	if s.cfg.Opening != nil {
		s.cfg.Opening(step)
	}
}

// IndexError reports why an index could not be built on open (nil: every
// index is in place).
func (s *Service) IndexError() error { return s.indexErr }

// Store returns the store the service writes to.
func (s *Service) Store() *store.Store { return s.st }

func (s *Service) now() time.Time { return s.cfg.Clock().UTC().Truncate(time.Millisecond) }

// record records an event in the write's transaction when Record is set.
func (s *Service) record(tx kv.Tx, eventType string, data map[string]any, at time.Time) error {
	if s.cfg.Record == nil || data == nil {
		return nil
	}
	return s.cfg.Record(tx, eventType, data, at)
}

func (s *Service) publish(eventType string, data map[string]any) {
	if s.cfg.Publish != nil && data != nil {
		s.cfg.Publish(eventType, data)
	}
}

func actorOrUnknown(actor string) string {
	if actor == "" {
		return UnknownActor
	}
	return actor
}

// internal turns a non-typed failure (bbolt, a hook) into ERR_INTERNAL so
// callers always get an *errs.Error.
func internal(err error) error {
	if err == nil {
		return nil
	}
	return errs.From(err)
}

// Project is a registered project (D7). State is empty for an active
// project and ProjectArchived for one the admin area archived.
type Project struct {
	Slug      string `json:"slug"`
	CreatedAt string `json:"created_at"`
	State     string `json:"state,omitempty"`
}

// ProjectArchived is the State of an archived workspace project: its tasks
// stay readable and updatable, but it takes no new tasks.
const ProjectArchived = "archived"

// AddProject registers slug. Registering an existing project is not an
// error — CAIRN_PROJECT is registered at every start — and returns the
// existing record.
func (s *Service) AddProject(slug string) (Project, error) {
	if err := checkSlug("project", slug); err != nil {
		return Project{}, err
	}
	var p Project
	err := s.st.Commit(func(tx kv.Tx) error {
		var err error
		p, err = s.ensureProject(tx, slug)
		return err
	})
	return p, internal(err)
}

// ensureProject returns slug's record, registering it first when unknown.
func (s *Service) ensureProject(tx kv.Tx, slug string) (Project, error) {
	var p Project
	b := tx.Bucket([]byte(store.BucketProjects))
	if raw := b.Get([]byte(slug)); raw != nil {
		return p, json.Unmarshal(raw, &p)
	}
	p = Project{Slug: slug, CreatedAt: FormatTime(s.now())}
	raw, err := json.Marshal(p)
	if err != nil {
		return p, err
	}
	return p, b.Put([]byte(slug), raw)
}

// SetProjectArchived archives (true) or unarchives (false) a registered
// project; an unknown slug is registered in that state, since the admin
// area's events may arrive in any order after a restart.
func (s *Service) SetProjectArchived(slug string, archived bool) (Project, error) {
	if err := checkSlug("project", slug); err != nil {
		return Project{}, err
	}
	var p Project
	err := s.st.Commit(func(tx kv.Tx) error {
		var err error
		if p, err = s.ensureProject(tx, slug); err != nil {
			return err
		}
		want := ""
		if archived {
			want = ProjectArchived
		}
		if p.State == want {
			return nil
		}
		p.State = want
		raw, err := json.Marshal(p)
		if err != nil {
			return err
		}
		return tx.Bucket([]byte(store.BucketProjects)).Put([]byte(slug), raw)
	})
	return p, internal(err)
}

// DeleteProject forgets slug: task_create and task_next_actions answer 404
// for it until it is registered again. Its tasks stay in the store (ids are
// never reused) and readable by id.
func (s *Service) DeleteProject(slug string) error {
	if err := checkSlug("project", slug); err != nil {
		return err
	}
	return internal(s.st.Commit(func(tx kv.Tx) error {
		// A project registered again starts without approval.
		if b := tx.Bucket(bucketProjectApproval); b.Exists() {
			if err := b.Delete([]byte(slug)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(store.BucketProjects)).Delete([]byte(slug))
	}))
}

// ListProjects returns every registered project ordered by slug.
func (s *Service) ListProjects() ([]Project, error) {
	out := []Project{}
	err := s.st.View(func(tx kv.Tx) error {
		return tx.Bucket([]byte(store.BucketProjects)).ForEach(func(_, v []byte) error {
			var p Project
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Slug < out[j].Slug })
	return out, internal(err)
}

// HasProject reports whether slug is registered.
func (s *Service) HasProject(slug string) (bool, error) {
	var ok bool
	err := s.st.View(func(tx kv.Tx) error {
		ok = projectExists(tx, slug)
		return nil
	})
	return ok, internal(err)
}

func projectExists(tx kv.Tx, slug string) bool {
	return slug != "" && tx.Bucket([]byte(store.BucketProjects)).Get([]byte(slug)) != nil
}

// projectKnown reports whether slug is registered or is the session's own
// project, which counts as registered (D21, D24).
func projectKnown(tx kv.Tx, slug string, call Call) bool {
	return projectExists(tx, slug) || (slug != "" && slug == call.Project)
}

// projectForWrite checks that slug takes new tasks, registering the
// session's own project on its first use in the write's transaction.
func (s *Service) projectForWrite(tx kv.Tx, slug string, call Call) error {
	raw := tx.Bucket([]byte(store.BucketProjects)).Get([]byte(slug))
	if raw == nil {
		if slug == "" || slug != call.Project {
			return projectNotFound(slug)
		}
		_, err := s.ensureProject(tx, slug)
		return err
	}
	var p Project
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if p.State == ProjectArchived {
		return errs.Conflictf(errs.Conflict, "project %q is archived and takes no new tasks; its tasks stay readable. Unarchive it (cairn admin) or file the task in another project", slug).
			With("field", "project").With("state", p.State)
	}
	return nil
}

func projectNotFound(slug string) error {
	return errs.NotFoundf(errs.ProjectNotFound, "project", "project %q is not registered; register it with `cairn project add %s` or set CAIRN_PROJECT", clip(slug), clip(slug))
}

func taskNotFound(field, id string) error {
	return errs.NotFoundf(errs.TaskNotFound, field, "task %s does not exist; find task ids with task_list", clip(id))
}

// --- storage helpers -------------------------------------------------------

func tasksBucket(tx kv.Tx) kv.Bucket { return tx.Bucket([]byte(store.BucketTasks)) }

// loadRecord reads task num; found is false when it does not exist.
func loadRecord(tx kv.Tx, num uint64) (*record, bool, error) {
	v := tasksBucket(tx).Get(store.U64(num))
	if v == nil {
		return nil, false, nil
	}
	var raw rawRecord
	if err := decodeRaw(num, v, &raw); err != nil {
		return nil, false, err
	}
	return raw.materialize(), true, nil
}

func keyProject(project string, num uint64) []byte {
	k := make([]byte, 0, len(project)+9)
	k = append(k, project...)
	k = append(k, 0)
	return append(k, store.U64(num)...)
}

func prefixProjectStatus(project, status string) []byte {
	k := make([]byte, 0, len(project)+len(status)+10)
	k = append(k, project...)
	k = append(k, 0)
	k = append(k, status...)
	return append(k, 0)
}

func keyProjectStatus(project, status string, num uint64) []byte {
	return append(prefixProjectStatus(project, status), store.U64(num)...)
}

func prefixStatus(status string) []byte { return append([]byte(status), 0) }

func keyStatus(status string, num uint64) []byte {
	return append(prefixStatus(status), store.U64(num)...)
}

func keyChild(parent, child uint64) []byte {
	return append(store.U64(parent), store.U64(child)...)
}

// putRecord writes rec and the index entries that depend on it: the search
// postings, the sorted list indexes and counters, the status indexes (when
// prev is nil — a new task — or the status changed), and the ready entries
// of rec, its parent and its dependents. It returns the dependents whose
// last open dependency rec just finished.
func putRecord(tx kv.Tx, rec *record, prev *record) ([]uint64, error) {
	if err := tasksBucket(tx).Put(store.U64(rec.num), rec.encode()); err != nil {
		return nil, err
	}
	if err := indexText(tx, rec, prev); err != nil {
		return nil, err
	}
	if err := deferIndexes(tx, rec, prev); err != nil {
		return nil, err
	}
	unblocked, err := indexStatus(tx, rec, prev)
	if err != nil {
		return nil, err
	}
	if err := refreshReady(tx, rec.num); err != nil {
		return nil, err
	}
	if prev != nil && prev.status == rec.status {
		return nil, nil
	}
	if rec.parent != 0 && (prev == nil || isOpen(prev.status) != isOpen(rec.status)) {
		if err := refreshReady(tx, rec.parent); err != nil {
			return nil, err
		}
	}
	if prev != nil {
		for _, d := range dependentsOf(tx, rec.num) {
			if err := refreshReady(tx, d); err != nil {
				return nil, err
			}
		}
	}
	return unblocked, nil
}

// indexStatus moves what the write path reads of rec's status when prev is
// nil or its status differs: its parent's child entry and the status codes
// stored beside the dependency edges that point at rec. The by-project
// and by-status entries move later (moveStatusEntries, listpending.go).
func indexStatus(tx kv.Tx, rec *record, prev *record) ([]uint64, error) {
	if prev != nil && prev.status == rec.status {
		return nil, nil
	}
	var unblocked []uint64
	if prev != nil {
		var err error
		if unblocked, err = propagateStatus(tx, rec.num, prev.status, rec.status); err != nil {
			return nil, err
		}
	}
	if rec.parent != 0 {
		return unblocked, tx.Bucket([]byte(store.BucketTaskChildren)).Put(keyChild(rec.parent, rec.num), []byte{rec.status})
	}
	return unblocked, nil
}

// moveStatusEntries moves rec's by-project, project/status and status
// entries from those of held (nil: it has none yet).
func moveStatusEntries(tx kv.Tx, rec, held *record) error {
	byPS := tx.Bucket([]byte(store.BucketTasksByProjectStatus))
	byS := tx.Bucket([]byte(store.BucketTasksByStatus))
	if held == nil {
		if err := tx.Bucket([]byte(store.BucketTasksByProject)).Put(keyProject(rec.project, rec.num), nil); err != nil {
			return err
		}
	} else {
		if held.status == rec.status {
			return nil
		}
		old := statusName(held.status)
		if err := byPS.Delete(keyProjectStatus(rec.project, old, rec.num)); err != nil {
			return err
		}
		if err := byS.Delete(keyStatus(old, rec.num)); err != nil {
			return err
		}
	}
	st := statusName(rec.status)
	if err := byPS.Put(keyProjectStatus(rec.project, st, rec.num), nil); err != nil {
		return err
	}
	return byS.Put(keyStatus(st, rec.num), nil)
}

// openChildren counts the sub-tasks of num that are neither done nor
// cancelled, reading only the children index through c (a cursor on
// BucketTaskChildren, reused across calls to avoid an allocation each).
func openChildren(c kv.Cursor, num uint64) int {
	var prefix [8]byte
	binary.BigEndian.PutUint64(prefix[:], num)
	n := 0
	for k, v := c.Seek(prefix[:]); len(k) == 16 && [8]byte(k[:8]) == prefix; k, v = c.Next() {
		if len(v) == 1 && v[0] != codeDone && v[0] != codeCancelled {
			n++
		}
	}
	return n
}

// childIDs lists the sub-task ids of num in number order.
func childIDs(tx kv.Tx, num uint64) []string {
	c := tx.Bucket([]byte(store.BucketTaskChildren)).Cursor()
	prefix := store.U64(num)
	out := []string{}
	for k, _ := c.Seek(prefix); len(k) == 16 && string(k[:8]) == string(prefix); k, _ = c.Next() {
		out = append(out, FormatTaskID(binary.BigEndian.Uint64(k[8:])))
	}
	return out
}
