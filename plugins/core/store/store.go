// Package store is the core (Area A) bbolt store: one file in the data dir
// holding projects, tasks and their indexes, and — added by later schema
// versions — the thought and event chains and audit sessions.
//
// Everything that must change together (a task and its chain link, a counter
// and the record it numbers) is written in one bbolt transaction, so the
// store exposes Update and View rather than hiding bbolt behind a narrower
// interface. Commits are durable: bbolt fsyncs on every commit and NoSync is
// never set, because an acknowledged write must survive SIGKILL.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bucket names of the layout. They are part of the on-disk format: renaming
// one needs a migration.
const (
	// BucketMeta holds store-wide settings such as the schema version.
	BucketMeta = "meta"
	// BucketCounters holds the store-wide id counters ("T", "Θ", "A").
	BucketCounters = "counters"
	// BucketProjectSeq holds one sequence counter per project slug.
	BucketProjectSeq = "project_seq"
	// BucketProjects maps a project slug to its JSON record.
	BucketProjects = "projects"
	// BucketTasks maps a task number (8 bytes, big endian) to its record.
	BucketTasks = "tasks"
	// BucketTasksByProject indexes tasks: slug, 0x00, number → empty.
	BucketTasksByProject = "idx_task_project"
	// BucketTasksByProjectStatus indexes tasks: slug, 0x00, status, 0x00,
	// number → empty.
	BucketTasksByProjectStatus = "idx_task_project_status"
	// BucketTasksByStatus indexes tasks: status, 0x00, number → empty.
	BucketTasksByStatus = "idx_task_status"
	// BucketTaskChildren indexes sub-tasks: parent number, child number →
	// the child's status code, so open dependencies count without decoding
	// the children.
	BucketTaskChildren = "idx_task_children"

	// BucketChainLinks holds the links of every hash chain (schema v2): task
	// number (8 bytes), chain byte ('t' thought, 'e' event), position (8
	// bytes) → the link as JSON.
	BucketChainLinks = "chain_links"
	// BucketChainHeads holds each chain's last link: task number, chain byte
	// → position (8 bytes) and hash (32 raw bytes), so an append reads one
	// key instead of seeking the chain's end.
	BucketChainHeads = "chain_heads"
	// BucketAuditSessions maps an audit session number to its JSON record.
	BucketAuditSessions = "audit_sessions"
	// BucketAuditFrozen maps a finalized session's number to its frozen
	// record set: packed 17-byte references (task, chain, position) in leaf
	// order.
	BucketAuditFrozen = "audit_frozen"

	// BucketTaskDeps holds dependencies (schema v3): task number, dependency
	// number → the dependency's status code, so open dependencies count
	// without decoding the dependencies.
	BucketTaskDeps = "task_deps"
	// BucketTaskDependents is BucketTaskDeps reversed: dependency number,
	// task number → empty; a status change of the dependency updates the
	// codes stored under its dependents.
	BucketTaskDependents = "task_dependents"
	// BucketTaskClaims maps a claimed task's number to its holder (D27).
	BucketTaskClaims = "task_claims"
	// BucketIdempotency maps a scoped idempotency key to the time it was
	// recorded (8 bytes, unix ms) and the call's output.
	BucketIdempotency = "idempotency"
	// BucketIdempotencyOrder orders the recorded keys by age: unix ms (8
	// bytes), a store-wide sequence (8 bytes) → the scoped key.
	BucketIdempotencyOrder = "idempotency_order"

	// BucketTaskTrigrams indexes the lower-cased title and description of
	// every task for task_list's search (schema v4): trigram (3 bytes),
	// task number (8 bytes) → empty. The tasks package fills it on first
	// open of an older store and keeps it in each task write's transaction.
	BucketTaskTrigrams = "idx_task_trigram"

	// BucketTaskSorted holds task_list's sorted indexes (schema v5): sort
	// variant (1 byte), scope (0x00 for every project, or 0x01, slug,
	// 0x00), status code, priority code, sort value (8 order-preserving
	// bytes), task number (8 bytes) → empty.
	BucketTaskSorted = "idx_task_sorted"
	// BucketTaskCounts holds task_list's total_count counters (schema v5):
	// scope or facet scope → one 8-byte count per (status, priority) cell.
	BucketTaskCounts = "task_counts"
	// BucketTaskReady indexes task_next_actions' ready tasks (schema v5):
	// slug, 0x00, 255-priority, open sub-tasks (4 bytes), created (8
	// order-preserving bytes), task number → empty.
	BucketTaskReady = "idx_task_ready"
	// BucketTaskReadyOf maps a task number to its key in BucketTaskReady
	// (present only while the task is ready), so a write can drop the old
	// entry without recomputing it.
	BucketTaskReadyOf = "idx_task_ready_of"
	// BucketTaskWaiting indexes todo tasks with open dependencies (schema
	// v5): slug, 0x00, task number → empty.
	BucketTaskWaiting = "idx_task_waiting"
	// BucketTaskFacets lists the members of task_list's assignee and label
	// facets (schema v5): facet scope (see the tasks package), task number
	// → empty. Their counters live in BucketTaskCounts.
	BucketTaskFacets = "idx_task_facet"
)

// Counter names for NextID. Each names one id space of the store; numbers
// count up from 1 and are never reused.
const (
	CounterTask    = "T"
	CounterThought = "Θ"
	CounterAudit   = "A"
	// CounterRecord numbers every chain record in the order it was recorded
	// across all chains; Merkle leaves follow this order (D12).
	CounterRecord = "R"
)

var keyUserVersion = []byte("user_version")

// DefaultTimeout is how long Open waits for the file lock. A second cairn
// process holding the file must produce an error quickly rather than hang
// the agent host's startup.
const DefaultTimeout = time.Second

// Options tune Open.
type Options struct {
	// Timeout bounds the wait for the file lock; 0 means DefaultTimeout.
	Timeout time.Duration
	// FileMode is the mode of a newly created file; 0 means 0600, since
	// the store may hold task text that is nobody else's business.
	FileMode os.FileMode
}

// Store is an open core store. It is safe for concurrent use: bbolt allows
// many readers and serializes writers.
type Store struct {
	db      *bolt.DB
	path    string
	version int
	group   group
}

// Migration moves the layout one version forward inside the open
// transaction. Migrations[i] produces version i+1.
type Migration func(tx *bolt.Tx) error

// migrations is the ordered list applied on open. Append only: a released
// migration never changes, since stores in the field already ran it.
var migrations = []Migration{
	migrateV1,
	migrateV2,
	migrateV3,
	migrateV4,
	migrateV5,
}

// CurrentVersion is the schema version this build writes.
var CurrentVersion = len(migrations)

// migrateV1 creates the initial layout.
func migrateV1(tx *bolt.Tx) error {
	for _, name := range []string{
		BucketCounters, BucketProjectSeq, BucketProjects, BucketTasks,
		BucketTasksByProject, BucketTasksByProjectStatus, BucketTasksByStatus,
		BucketTaskChildren,
	} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrateV2 adds the decision trail: hash chains and audit sessions.
func migrateV2(tx *bolt.Tx) error {
	for _, name := range []string{BucketChainLinks, BucketChainHeads, BucketAuditSessions, BucketAuditFrozen} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrateV3 adds task dependencies, claims and idempotency records.
func migrateV3(tx *bolt.Tx) error {
	for _, name := range []string{BucketTaskDeps, BucketTaskDependents, BucketTaskClaims, BucketIdempotency, BucketIdempotencyOrder} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrateV4 adds the search index. It starts empty; the tasks package
// builds it from the stored tasks when it finds it not built (meta key
// "trigrams_built" absent), since only that package can decode a task.
func migrateV4(tx *bolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists([]byte(BucketTaskTrigrams))
	return err
}

// migrateV5 adds task_list's sorted indexes and counters and the ready and
// waiting indexes of task_next_actions. Like v4 they start empty and the
// tasks package fills them from the stored tasks (meta key
// "list_index_upto" says how far it got).
func migrateV5(tx *bolt.Tx) error {
	for _, name := range []string{BucketTaskSorted, BucketTaskCounts, BucketTaskReady, BucketTaskReadyOf, BucketTaskWaiting, BucketTaskFacets} {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// Open opens (creating if needed) the store file at path and brings its
// schema up to CurrentVersion. Every failure is an *errs.Error with code
// ERR_INIT_FAILED whose message says what to do.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.FileMode == 0 {
		opts.FileMode = 0o600
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, initFailed("cannot create the data directory %s: %v; check its permissions or set CAIRN_DATA_DIR", dir, err)
		}
	}
	db, err := bolt.Open(path, opts.FileMode, &bolt.Options{Timeout: opts.Timeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, initFailed("store %s is locked by another cairn process; stop it or set CAIRN_DATA_DIR to another directory", path)
		}
		return nil, initFailed("cannot open store %s: %v; check the file and its permissions, or set CAIRN_DATA_DIR to another directory", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

func initFailed(format string, args ...any) *errs.Error {
	return errs.Newf(500, errs.InitFailed, format, args...)
}

// migrate applies every migration past the stored version in one
// transaction, so a crash mid-way leaves the old version intact.
func (s *Store) migrate() error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte(BucketMeta))
		if err != nil {
			return err
		}
		v := 0
		if raw := meta.Get(keyUserVersion); raw != nil {
			if len(raw) != 8 {
				return initFailed("store %s has a corrupt schema version; restore it from a backup or set CAIRN_DATA_DIR to a fresh directory", s.path)
			}
			v = int(binary.BigEndian.Uint64(raw))
		}
		if v > len(migrations) {
			return initFailed("store %s has schema version %d, newer than this cairn (%d); upgrade cairn", s.path, v, len(migrations))
		}
		for ; v < len(migrations); v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("migration to version %d: %w", v+1, err)
			}
		}
		s.version = v
		return meta.Put(keyUserVersion, u64(uint64(v)))
	})
	if err != nil {
		if e, ok := errs.As(err); ok {
			return e
		}
		return initFailed("cannot migrate store %s: %v; restore it from a backup or set CAIRN_DATA_DIR to a fresh directory", s.path, err)
	}
	return nil
}

// UserVersion is the schema version of the open store.
func (s *Store) UserVersion() int { return s.version }

// Path is the file the store lives in.
func (s *Store) Path() string { return s.path }

// DB exposes the bbolt handle for callers that need more than Update/View.
func (s *Store) DB() *bolt.DB { return s.db }

// Close releases the file and its lock.
func (s *Store) Close() error { return s.db.Close() }

// Update runs fn in one durable read-write transaction; fn's error rolls
// everything back.
func (s *Store) Update(fn func(tx *bolt.Tx) error) error { return s.db.Update(fn) }

// View runs fn in a read-only transaction with a consistent snapshot.
func (s *Store) View(fn func(tx *bolt.Tx) error) error { return s.db.View(fn) }

// NextID returns the next number of the store-wide counter name (for
// example CounterTask), starting at 1. It must run inside the transaction
// that writes the numbered record, so a rolled-back write also rolls back
// the counter and a committed number is never handed out twice.
func NextID(tx *bolt.Tx, name string) (uint64, error) {
	return next(tx, BucketCounters, name)
}

// NextProjectSeq returns the next sequence number of project, starting at 1.
func NextProjectSeq(tx *bolt.Tx, project string) (uint64, error) {
	return next(tx, BucketProjectSeq, project)
}

// PeekID returns the last number handed out by counter name (0 if none).
func PeekID(tx *bolt.Tx, name string) uint64 {
	b := tx.Bucket([]byte(BucketCounters))
	if b == nil {
		return 0
	}
	if raw := b.Get([]byte(name)); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}

func next(tx *bolt.Tx, bucket, name string) (uint64, error) {
	b := tx.Bucket([]byte(bucket))
	if b == nil {
		return 0, fmt.Errorf("store: bucket %s missing", bucket)
	}
	var n uint64
	if raw := b.Get([]byte(name)); raw != nil {
		if len(raw) != 8 {
			return 0, fmt.Errorf("store: counter %s/%s corrupt", bucket, name)
		}
		n = binary.BigEndian.Uint64(raw)
	}
	n++
	if err := b.Put([]byte(name), u64(n)); err != nil {
		return 0, err
	}
	return n, nil
}

// U64 encodes n as 8 big-endian bytes, the key form of numbered records:
// big endian keeps bbolt's byte order equal to numeric order.
func U64(n uint64) []byte { return u64(n) }

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}
