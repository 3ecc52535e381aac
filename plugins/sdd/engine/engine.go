package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Constants of docs/decisions.md D17.
const (
	// LeaseDurationMS is the lifetime of an execution lease.
	LeaseDurationMS = 3_600_000
	// MaxRetainedLeases bounds the closed (returned or expired) leases kept
	// in the state file; active leases are always kept.
	MaxRetainedLeases = 100
	// MaxSpawnQueueEntries bounds the spawn queue; pending items are always
	// kept and closed items fill the remainder.
	MaxSpawnQueueEntries = 400
	// MaxSpawnHistoryEntries bounds the spawn history.
	MaxSpawnHistoryEntries = 300
	// ResourceContentLimit caps the characters returned by ReadResource.
	ResourceContentLimit = 5000
	// StaleProjectAfter is how long without a state write makes the project
	// stale.
	StaleProjectAfter = 24 * time.Hour
	// DefaultHistoryLimit and MaxHistoryLimit bound ListSpawnHistory.
	DefaultHistoryLimit = 50
	// MaxHistoryLimit is the largest ListSpawnHistory limit.
	MaxHistoryLimit = 200
	// MaxEvolutionActions bounds the recorded evolution actions (the spec
	// sets no limit; the file must not grow without bound).
	MaxEvolutionActions = 200
)

// Event types published through Config.Publish (D19).
const (
	EventLeaseIssued    = "sdd.lease.issued"
	EventLeaseReturned  = "sdd.lease.returned"
	EventSpawnQueued    = "sdd.spawn.queued"
	EventSpawnCompleted = "sdd.spawn.completed"
	// EventStateRecovered reports that a corrupt state file was set aside.
	EventStateRecovered = "sdd.state.recovered"
)

// stateFileName is the state document inside <DataDir>/state.
const stateFileName = "sdd-state.json"

// stateRel is the state document relative to the data dir.
const stateRel = "state/" + stateFileName

// maxStateReadBytes bounds the state file read at start; a larger file
// (say, an indented one from an older build) is set aside like a corrupt
// one instead of being loaded whole.
const maxStateReadBytes = 4 * MaxStateBytes

// Config configures an Engine.
type Config struct {
	// Root is the workspace root (CAIRN_ROOT); command files, agent files
	// and the planning root live under it.
	Root string
	// DataDir holds state/sdd-state.json; default <Root>/.cairn/data.
	DataDir string
	// Clock returns the current time; default time.Now. Tests inject it.
	Clock func() time.Time
	// Publish receives domain events, recorded in the state document
	// with the write that caused them and removed once Publish reports
	// them handled (outbox.go, drainer.go); nil discards them. It is
	// called without the engine lock held, so it may call back into the
	// engine.
	Publish PublishFunc
	// Log receives warnings (events not published, not removed); nil
	// drops them.
	Log func(msg string, keyvals ...any)
	// Store is CAIRN_STORE (docs/decisions.md D26): empty or "bbolt" keeps the
	// state in DataDir's file; a postgres:// URL keeps it in that
	// database (pgstate.go), shared by every server using it.
	Store string
}

// Engine is the SDD domain. All methods are safe for concurrent use.
type Engine struct {
	cfg       Config
	root      string
	dataDir   string
	statePath string

	mu       sync.Mutex
	st       *state
	pg       *pgState
	loaded   bool
	held     bool // the state file is in the data dir's inventory (held.go)
	recovery *Recovery
	drain    *drainer // nil without Publish
}

// Recovery describes a corrupt state file that was set aside at load.
type Recovery struct {
	Error     string `json:"error"`
	MovedTo   string `json:"movedTo"`
	Recovered string `json:"recoveredAt"`
}

// New returns an engine for cfg. It does not touch the disk; call
// Initialize (methods initialize lazily when it was not called).
func New(cfg Config) (*Engine, error) {
	if cfg.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, errs.Newf(500, errs.ConfigInvalid, "cannot determine the workspace root: %v", err)
		}
		cfg.Root = wd
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, errs.Newf(500, errs.ConfigInvalid, "invalid workspace root %q: %v", cfg.Root, err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(root, ".cairn", "data")
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, errs.Newf(500, errs.ConfigInvalid, "invalid data dir %q: %v", cfg.DataDir, err)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	cfg.Root, cfg.DataDir = root, dataDir
	e := &Engine{
		cfg:       cfg,
		root:      root,
		dataDir:   dataDir,
		statePath: filepath.Join(dataDir, "state", stateFileName),
	}
	switch {
	case cfg.Store == "" || cfg.Store == "bbolt":
	case pgmigrate.IsPostgres(cfg.Store):
		if e.pg, err = openPGState(cfg.Store); err != nil {
			return nil, errs.Newf(500, errs.InitFailed, "cannot open the SDD state store: %v", err)
		}
		e.statePath = e.pg.where
	default:
		return nil, errs.Invalidf("CAIRN_STORE", "enum", "CAIRN_STORE must be bbolt or a postgres:// URL")
	}
	if cfg.Publish != nil {
		e.drain = newDrainer(e, cfg.Publish)
	}
	return e, nil
}

// Close stops publishing events (those not yet handled stay in the state
// for the next engine) and releases the state store's connections.
func (e *Engine) Close() {
	if e.drain != nil {
		e.drain.close()
	}
	if e.pg != nil {
		e.pg.close()
	}
}

func (e *Engine) warn(msg string, keyvals ...any) {
	if e.cfg.Log != nil {
		e.cfg.Log(msg, keyvals...)
	}
}

// StoreVersion is the state store's kind ("file" or "postgres") and, on
// PostgreSQL, its migration version.
func (e *Engine) StoreVersion() (kind string, version int) {
	if e.pg != nil {
		return "postgres", e.pg.version
	}
	return "file", stateVersion
}

// StatePath is the state file, or the database URL without its password
// on PostgreSQL.
func (e *Engine) StatePath() string { return e.statePath }

// PlanningRoot is the absolute path of <Root>/.planning.
func (e *Engine) PlanningRoot() string { return filepath.Join(e.root, ".planning") }

// Initialize loads the state from disk (replacing the cache) and rehydrates
// only unexpired, unreturned leases as active. A missing file yields a fresh
// state. A corrupt file is renamed to sdd-state.json.corrupt-<time>, a fresh
// state is used, and the problem is reported by Health and GetStats (and
// published as sdd.state.recovered) instead of being overwritten silently.
// It returns true, mirroring the specification. It starts publishing the
// events the state holds (those a previous process left, too).
func (e *Engine) Initialize() (bool, error) {
	e.mu.Lock()
	rec, err := e.loadLocked()
	e.mu.Unlock()
	if err != nil {
		return false, err
	}
	if rec != nil {
		// The fresh state is written at once, with the event in it.
		if err := e.write(func(_ *state, _ time.Time, emit func(string, any)) error {
			emit(EventStateRecovered, rec)
			return nil
		}); err != nil {
			return false, err
		}
	}
	if e.drain != nil {
		e.drain.start()
	}
	return true, nil
}

func (e *Engine) loadLocked() (*Recovery, error) {
	now := e.cfg.Clock()
	if e.pg != nil {
		// Every read and write fetches the row; a check here only
		// surfaces a bad document at start.
		_, err := e.loadPG(now)
		e.loaded = err == nil
		return nil, err
	}
	r, err := os.OpenRoot(e.dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		e.st, e.loaded = newState(now), true
		return nil, nil
	}
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cannot open the data dir %s: %v", e.dataDir, err)
	}
	defer r.Close()
	data, err := readRegular(r, stateRel, maxStateReadBytes)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(data) == 0 {
		if err := e.refuseVanished(); err != nil {
			return nil, err
		}
	}
	var bad error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.st, e.loaded = newState(now), true
		return nil, nil
	case errors.Is(err, errEscapes):
		return nil, errs.Newf(500, errs.InitFailed, "SDD state %s resolves outside the data dir %s; remove the symlink", e.statePath, e.dataDir)
	case isRefusal(err):
		bad = err
	case err != nil:
		return nil, errs.Newf(500, errs.InitFailed, "cannot read SDD state %s: %v", e.statePath, err)
	default:
		st, perr := decodeState(data)
		if perr == nil {
			st.normalize(now)
			e.st, e.loaded = st, true
			e.noteHeld()
			return nil, nil
		}
		bad = perr
	}
	// A corrupt or refused file is set aside, never overwritten: the
	// operator can still inspect or repair it.
	stamp := now.UTC().Format("20060102T150405.000Z")
	if err := r.Rename(stateRel, stateRel+".corrupt-"+stamp); err != nil {
		return nil, errs.Newf(500, errs.InitFailed,
			"SDD state %s is corrupt (%v) and could not be set aside: %v; move it away or repair it", e.statePath, bad, err)
	}
	moved := e.statePath + ".corrupt-" + stamp
	e.recovery = &Recovery{
		Error:     fmt.Sprintf("state file %s was corrupt: %v", e.statePath, bad),
		MovedTo:   moved,
		Recovered: iso(now),
	}
	e.st, e.loaded = newState(now), true
	return e.recovery, nil
}

// ensureLocked lazily initializes so a caller that forgot Initialize still
// sees the persisted state rather than an empty one.
func (e *Engine) ensureLocked() error {
	if e.loaded {
		return nil
	}
	_, err := e.loadLocked()
	return err
}

// event is a domain event emitted by a write, recorded in the outbox
// (outbox.go) with it.
type event struct {
	typ  string
	data any
}

// read runs fn under the lock on the cached state.
func (e *Engine) read(fn func(s *state, now time.Time) error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureLocked(); err != nil {
		return err
	}
	now := e.cfg.Clock()
	if e.pg != nil {
		st, err := e.loadPG(now)
		if err != nil {
			return err
		}
		return fn(st, now)
	}
	return fn(e.st, now)
}

// write runs fn as one atomic write without an idempotency key.
func (e *Engine) write(fn func(s *state, now time.Time, emit func(string, any)) error) error {
	return e.commit(idempotency.Key{}, nil, func(s *state, now time.Time, emit func(string, any)) (any, error) {
		return nil, fn(s, now, emit)
	})
}

// commit runs fn on a copy of the state, prunes it, persists it atomically
// and only then swaps it in, so a failed write leaves the cache unchanged
// (no acknowledged-but-unpersisted change). Events emitted by fn are
// recorded in the same document (outbox.go) and published after a
// successful write, outside the lock; events already handled leave the
// document with it.
//
// With a key (k), the lookup, fn and the record of fn's result happen
// under one lock and land in one file replace: when k is already recorded
// its result is stored in *recorded and fn does not run.
func (e *Engine) commit(k idempotency.Key, recorded *json.RawMessage, fn func(s *state, now time.Time, emit func(string, any)) (any, error)) error {
	var handled map[string]bool
	if e.drain != nil {
		handled = e.drain.handledSnapshot()
	}
	var evs []Event
	err := func() error {
		e.mu.Lock()
		defer e.mu.Unlock()
		if err := e.ensureLocked(); err != nil {
			return err
		}
		if e.pg != nil {
			err := e.pg.replace(func(cur []byte) ([]byte, error) {
				now := e.cfg.Clock()
				st, err := e.decodePG(cur, now)
				if err != nil {
					return nil, err
				}
				var data []byte
				_, data, evs, err = e.apply(st, now, k, recorded, handled, fn)
				return data, err
			})
			if err == nil && evs != nil {
				e.committed(evs, handled)
			}
			return err
		}
		next, data, recordedEvs, err := e.apply(e.st, e.cfg.Clock(), k, recorded, handled, fn)
		if err != nil || next == nil {
			return err
		}
		if err := e.persist(append(data, '\n')); err != nil {
			return errs.Newf(500, errs.Internal, "cannot persist SDD state to %s: %v", e.statePath, err)
		}
		e.st = next
		evs = recordedEvs
		e.committed(evs, handled)
		return nil
	}()
	if err == nil && e.drain != nil {
		e.drain.pump()
	}
	return err
}

// committed tells the drainer what a persisted write recorded and removed;
// the caller holds the lock, so records arrive in commit order.
func (e *Engine) committed(evs []Event, handled map[string]bool) {
	if e.drain == nil {
		return
	}
	e.drain.record(evs)
	e.drain.forget(handled)
}

// apply runs fn on a copy of cur and returns the pruned copy, its encoding
// and the events it recorded; all nil when there is nothing to write (a
// replayed key, or errUnchanged). Events in handled leave the outbox.
func (e *Engine) apply(cur *state, now time.Time, k idempotency.Key, recorded *json.RawMessage, handled map[string]bool, fn func(s *state, now time.Time, emit func(string, any)) (any, error)) (*state, []byte, []Event, error) {
	if raw, ok, err := lookupCall(cur, k, now); err != nil || ok {
		if ok && recorded != nil {
			*recorded = raw
		}
		return nil, nil, nil, err
	}
	next, err := cur.clone()
	if err != nil {
		return nil, nil, nil, errs.Newf(500, errs.Internal, "cannot copy SDD state: %v", err)
	}
	var raw []event
	result, err := fn(next, now, func(t string, d any) { raw = append(raw, event{t, d}) })
	if errors.Is(err, errUnchanged) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if k.Keyed() {
		if err := recordCall(next, k, result, now); err != nil {
			return nil, nil, nil, errs.Newf(500, errs.Internal, "cannot record the call's outcome: %v", err)
		}
	}
	next.Project.LastWriteAt = iso(now)
	prune(next, now)
	dropHandled(next, handled)
	evs := []Event{}
	if e.drain != nil {
		if evs, err = recordEvents(next, raw, now); err != nil {
			return nil, nil, nil, errs.Newf(500, errs.Internal, "cannot encode an SDD event: %v", err)
		}
		shedOldest(next)
		if shed := next.EventsShed - cur.EventsShed; shed > 0 {
			e.warn("sdd events dropped unhandled, oldest first: the state keeps at most 1,000 pending events (2 MiB) while the host does not handle them", "dropped", shed, "pending", len(next.Outbox))
		}
	}
	data, err := json.Marshal(next)
	if err != nil {
		return nil, nil, nil, errs.Newf(500, errs.Internal, "cannot encode SDD state: %v", err)
	}
	// The outbox has bounds of its own (MaxPendingEventBytes).
	if size := len(data) - outboxSize(next.Outbox); size > stateLimit {
		return nil, nil, nil, errs.Invalidf("state", "maxBytes",
			"this write would grow the SDD state to %d bytes, over its limit of %d; delete values you no longer need (sdd_state delete) or return leases",
			size, stateLimit).With("limit", stateLimit)
	}
	return next, data, evs, nil
}

// removeEvents drops the events in ids from the document, in a replace of
// its own (no write changed the document meanwhile to take them along).
func (e *Engine) removeEvents(ids map[string]bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.ensureLocked(); err != nil {
		return err
	}
	if e.pg != nil {
		return e.pg.replace(func(cur []byte) ([]byte, error) {
			st, err := e.decodePG(cur, e.cfg.Clock())
			if err != nil || !dropHandled(st, ids) {
				return nil, err
			}
			return json.Marshal(st)
		})
	}
	next := *e.st
	if !dropHandled(&next, ids) {
		return nil
	}
	data, err := json.Marshal(&next)
	if err != nil {
		return err
	}
	if err := e.persist(append(data, '\n')); err != nil {
		return err
	}
	e.st = &next
	return nil
}

// pendingOutbox returns the events waiting in the document, oldest first.
func (e *Engine) pendingOutbox() ([]Event, error) {
	var out []Event
	err := e.read(func(s *state, _ time.Time) error {
		out = s.Outbox
		return nil
	})
	return out, err
}

// PendingEvents reports how many events wait in the state to be handled
// downstream, and how many were shed to keep within MaxPendingEvents and
// MaxPendingEventBytes.
func (e *Engine) PendingEvents() (pending int, shed int64, err error) {
	err = e.read(func(s *state, _ time.Time) error {
		pending, shed = len(s.Outbox), s.EventsShed
		return nil
	})
	return pending, shed, err
}

// loadPG reads the current document from PostgreSQL.
func (e *Engine) loadPG(now time.Time) (*state, error) {
	data, err := e.pg.load()
	if err != nil {
		return nil, errs.Newf(503, errs.Unavailable, "%v", err)
	}
	return e.decodePG(data, now)
}

// decodePG decodes a stored document (nil: none yet). A document that does
// not decode is refused rather than replaced: unlike the file, the row is
// shared by every server, and none of them may discard it on its own.
func (e *Engine) decodePG(data []byte, now time.Time) (*state, error) {
	if data == nil {
		return newState(now), nil
	}
	st, err := decodeState(data)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "the SDD state in %s does not decode (%v); repair the sdd_state row", e.pg.where, err)
	}
	st.normalize(now)
	return st, nil
}

// persist replaces the state file atomically inside the data dir.
func (e *Engine) persist(data []byte) error {
	if err := os.MkdirAll(e.dataDir, 0o755); err != nil {
		return err
	}
	r, err := os.OpenRoot(e.dataDir)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := writeAtomic(r, stateRel, data); err != nil {
		return err
	}
	e.noteHeld()
	return nil
}

// decodeState parses a state document, keeping numbers exact.
func decodeState(data []byte) (*state, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var st state
	if err := dec.Decode(&st); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON document")
	}
	return &st, nil
}

func (s *state) clone() (*state, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return decodeState(data)
}

// iso formats t like JavaScript's toISOString (D5).
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// parseISO parses a time written by iso; the zero time on failure.
func parseISO(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Health is the engine's health report.
type Health struct {
	Status   string    `json:"status" jsonschema:"enum=ok,enum=degraded"`
	Problems []string  `json:"problems"`
	Recovery *Recovery `json:"recovery,omitempty"`
}

// Health reports ok, or degraded with the reasons (a recovered corrupt
// state file, a stale project).
func (e *Engine) Health() Health {
	h := Health{Status: "ok", Problems: []string{}}
	_ = e.read(func(s *state, now time.Time) error {
		h = e.healthLocked(s, now)
		return nil
	})
	return h
}

func (e *Engine) healthLocked(s *state, now time.Time) Health {
	h := Health{Status: "ok", Problems: []string{}, Recovery: e.recovery}
	if e.recovery != nil {
		h.Status = "degraded"
		h.Problems = append(h.Problems, e.recovery.Error+"; the corrupt copy is kept at "+e.recovery.MovedTo+" and a fresh state was started")
	}
	if projectStale(s, now) {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "project is stale: no state write since "+s.Project.LastWriteAt+" (run sdd_evolve detect)")
	}
	return h
}

func projectStale(s *state, now time.Time) bool {
	if s.Project.LastWriteAt == "" {
		return false
	}
	t := parseISO(s.Project.LastWriteAt)
	return !t.IsZero() && now.Sub(t) >= StaleProjectAfter
}
