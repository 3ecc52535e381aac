package store

// The bbolt backend: one file in the data dir, held open (and flock'ed) by
// the process for as long as the store is open. Its layout is versioned by
// the meta key user_version and upgraded on open by the migrations below,
// each creating the buckets of one version.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

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

// Migration moves the bbolt layout one version forward inside the open
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
	migrateV6,
	migrateV7,
	migrateV8,
	migrateV9,
	migrateV10,
	migrateV11,
}

// CurrentVersion is the schema version this build writes.
var CurrentVersion = len(migrations)

func createBuckets(tx *bolt.Tx, names ...string) error {
	for _, name := range names {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrateV1 creates the initial layout.
func migrateV1(tx *bolt.Tx) error {
	return createBuckets(tx, BucketCounters, BucketProjectSeq, BucketProjects, BucketTasks,
		BucketTasksByProject, BucketTasksByProjectStatus, BucketTasksByStatus, BucketTaskChildren)
}

// migrateV2 adds the decision trail: hash chains and audit sessions.
func migrateV2(tx *bolt.Tx) error {
	return createBuckets(tx, BucketChainLinks, bucketChainHeads, BucketAuditSessions, BucketAuditFrozen)
}

// migrateV3 adds task dependencies, claims and idempotency records.
func migrateV3(tx *bolt.Tx) error {
	return createBuckets(tx, BucketTaskDeps, BucketTaskDependents, BucketTaskClaims, bucketIdempotency, bucketIdempotencyOrder)
}

// migrateV4 adds the search index. It starts empty; the tasks package
// builds it from the stored tasks when it finds it not built (meta key
// "trigrams_built" absent), since only that package can decode a task.
func migrateV4(tx *bolt.Tx) error { return createBuckets(tx, BucketTaskTrigrams) }

// migrateV5 adds task_list's sorted indexes and counters and the ready and
// waiting indexes of task_next_actions. Like v4 they start empty and the
// tasks package fills them from the stored tasks (meta key
// "list_index_upto" says how far it got).
func migrateV5(tx *bolt.Tx) error {
	return createBuckets(tx, BucketTaskSorted, BucketTaskCounts, BucketTaskReady, BucketTaskReadyOf, BucketTaskWaiting, BucketTaskFacets)
}

// migrateV6 adds the search text of every task. It starts empty; the
// tasks package fills it from the stored tasks (meta key
// "search_text_built" absent until it has).
func migrateV6(tx *bolt.Tx) error { return createBuckets(tx, BucketTaskSearchText) }

// migrateV7 keeps idempotency records in two generations instead of one
// bucket and an age index: the index goes, the records kept so far become
// the current generation, and the other starts empty.
func migrateV7(tx *bolt.Tx) error {
	if err := tx.DeleteBucket([]byte(bucketIdempotencyOrder)); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return err
	}
	if m := tx.Bucket([]byte(BucketMeta)); m != nil {
		if err := m.Delete([]byte("idempotency_seq")); err != nil {
			return err
		}
	}
	return createBuckets(tx, bucketIdempotencyAlt)
}

// migrateV8 moves each chain's head into the links bucket, under its
// chain's key with position 2⁶⁴−1, and drops the heads bucket.
func migrateV8(tx *bolt.Tx) error {
	heads := tx.Bucket([]byte(bucketChainHeads))
	if heads == nil {
		return nil
	}
	links := tx.Bucket([]byte(BucketChainLinks))
	if err := heads.ForEach(func(k, v []byte) error {
		if len(k) != 9 {
			return fmt.Errorf("chain head key %x is not a task and a chain; run cairn store check", k)
		}
		return links.Put(append(append([]byte(nil), k...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), v)
	}); err != nil {
		return err
	}
	return tx.DeleteBucket([]byte(bucketChainHeads))
}

// migrateV9 keeps idempotency records in rings of buckets by time
// (idempotency.go) instead of two generations bounded by count, which
// forgot a key after enough later writes. Records kept so far go: they
// were honoured for a replay within seconds, and an upgrade restarts
// every server.
func migrateV9(tx *bolt.Tx) error {
	for _, name := range []string{bucketIdempotency, bucketIdempotencyAlt} {
		if err := tx.DeleteBucket([]byte(name)); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
			return err
		}
	}
	if m := tx.Bucket([]byte(BucketMeta)); m != nil {
		for _, k := range idempotencyV8MetaKeys {
			if err := m.Delete([]byte(k)); err != nil {
				return err
			}
		}
	}
	return createBuckets(tx, IdempotencyBuckets()...)
}

// migrateV10 lets a task record hold its origin, where an imported task
// came from (docs/decisions.md D41), in a second record format the tasks
// package writes only for such a task: no record is rewritten, and the
// version makes an older cairn, which would take such a record for a
// corrupt one, refuse the store instead.
func migrateV10(*bolt.Tx) error { return nil }

// migrateV11 puts a journal in front of the file (docs/decisions.md D47):
// after a crash, commits may be in core.db-journal-* alone. Nothing in the
// file changes; the version makes an older cairn, which would read the file
// without the journal's commits, refuse the store instead.
func migrateV11(*bolt.Tx) error { return nil }

// idempotencyV8MetaKeys are the meta keys the generations of v7 and v8
// kept (the last only on PostgreSQL).
var idempotencyV8MetaKeys = []string{"idempotency_count", "idempotency_generation", "idempotency_since", "idempotency_granted"}

type boltBackend struct {
	db   *bolt.DB
	path string
	// j journals the commits (docs/decisions.md D47); nil for a file
	// opened read-only as a copy's source, or with CAIRN_STORE_JOURNAL=off.
	j *kv.Journaled
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
	// The file's pages are walked before bbolt maps it (bbolt faults on a
	// truncated file and panics on a corrupt page): a damaged store is
	// one line naming the file, the damage and what to run.
	db, warnings, err := boltcheck.Open(path, opts.FileMode, &bolt.Options{Timeout: opts.Timeout, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		var damaged *boltcheck.DamagedError
		switch {
		case errors.Is(err, bolterrors.ErrTimeout), errors.Is(err, boltcheck.ErrLocked):
			return nil, initFailed("store %s is locked by another cairn process; stop it or set CAIRN_DATA_DIR to another directory", path)
		case errors.As(err, &damaged):
			return nil, initFailed("%s", damaged.Error())
		}
		return nil, initFailed("cannot open store %s: %v; check the file and its permissions, or set CAIRN_DATA_DIR to another directory", path, err)
	}
	s := &Store{bolt: &boltBackend{db: db, path: path}, warnings: warnings}
	// The journal's commits go into the file before any migration reads
	// it: a journal is always of the version its process migrated to.
	if os.Getenv("CAIRN_STORE_JOURNAL") != "off" {
		var j *kv.Journaled
		err := boltcheck.Guard(path, func() error {
			var err error
			j, err = kv.OpenJournaled(db, path)
			return err
		})
		if err != nil {
			var damaged *boltcheck.DamagedError
			if errors.As(err, &damaged) {
				return nil, initFailed("%s", damaged.Error())
			}
			_ = db.Close()
			return nil, initFailed("cannot open the journal of store %s: %v; check the files %s-journal-* and their permissions", path, err, path)
		}
		for _, skipped := range j.Skipped {
			s.warnings = append(s.warnings, boltcheck.Problem{File: path + "-journal", Damage: "journal not replayed: " + skipped})
		}
		s.bolt.j = j
	}
	if err := boltcheck.Guard(path, func() error {
		var err error
		s.version, err = migrateBolt(db, path)
		return err
	}); err != nil {
		var damaged *boltcheck.DamagedError
		if errors.As(err, &damaged) {
			// bbolt panicked inside its transaction, whose locks it still
			// holds: Close would wait for them forever. The process is
			// failing its start; the handle goes with it.
			return nil, initFailed("%s", damaged.Error())
		}
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Warnings are the problems found in the store's file at open that bbolt
// survives (a damaged meta page it fell back from): health reports them.
func (s *Store) Warnings() []boltcheck.Problem { return s.warnings }

// migrateBolt applies every migration past the stored version in one
// transaction, so a crash mid-way leaves the old version intact.
func migrateBolt(db *bolt.DB, path string) (int, error) {
	// A store at the current version with every bucket in place needs no
	// write: a commit is an fsync at every start (docs/decisions.md D46).
	if v, ok := currentBolt(db); ok {
		return v, nil
	}
	var v int
	err := db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte(BucketMeta))
		if err != nil {
			return err
		}
		if v, err = checkVersion(kv.Bolt(tx).Bucket([]byte(BucketMeta)), path); err != nil {
			return err
		}
		for ; v < len(migrations); v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("migration to version %d: %w", v+1, err)
			}
		}
		if err := createBuckets(tx, openBuckets...); err != nil {
			return err
		}
		return meta.Put(keyUserVersion, u64(uint64(v)))
	})
	if err != nil {
		if e, ok := errs.As(err); ok {
			return 0, e
		}
		return 0, initFailed("cannot migrate store %s: %v; restore it from a backup or set CAIRN_DATA_DIR to a fresh directory", path, err)
	}
	return v, nil
}

// openBuckets are the buckets every open makes sure of, whatever the
// version.
var openBuckets = []string{BucketLastProject, BucketEventOutbox, BucketTaskTrigramPending, BucketTaskListPending, BucketLeases, BucketImportJournal, BucketProjectApproval, BucketTaskApprovals}

// currentBolt reports whether db is at the current version with
// openBuckets in place, and its version; a read, so it writes nothing.
func currentBolt(db *bolt.DB) (v int, ok bool) {
	_ = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte(BucketMeta))
		if meta == nil {
			return nil
		}
		raw := meta.Get(keyUserVersion)
		if len(raw) != 8 || int(binary.BigEndian.Uint64(raw)) != len(migrations) {
			return nil
		}
		for _, name := range openBuckets {
			if tx.Bucket([]byte(name)) == nil {
				return nil
			}
		}
		v, ok = len(migrations), true
		return nil
	})
	return v, ok
}

// OnBolt presents an already open bbolt handle (a read-only one, for a
// copy's source) as a Store, without migrating it. Closing the Store closes
// db.
func OnBolt(db *bolt.DB) (*Store, error) {
	s := &Store{bolt: &boltBackend{db: db, path: db.Path()}}
	err := db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte(BucketMeta))
		if meta == nil {
			return initFailed("%s is not a cairn core store (no meta bucket)", db.Path())
		}
		var err error
		s.version, err = checkVersion(kv.Bolt(tx).Bucket([]byte(BucketMeta)), db.Path())
		return err
	})
	return s, err
}

// Checkpoint writes every journaled commit into the file and waits for
// it, so that the file alone (a backup's copy, a check) holds them all.
// Nothing to do on PostgreSQL or without a journal.
func (s *Store) Checkpoint() error {
	if s.bolt == nil || s.bolt.j == nil {
		return nil
	}
	return s.bolt.j.Checkpoint()
}

// CheckpointErr is the journal's last checkpoint error, nil once one
// succeeds (and without a journal).
func (s *Store) CheckpointErr() error {
	if s.bolt == nil || s.bolt.j == nil {
		return nil
	}
	return s.bolt.j.CheckpointErr()
}

// Checkpoints counts the checkpoints the journal made since open (0
// without one).
func (s *Store) Checkpoints() uint64 {
	if s.bolt == nil || s.bolt.j == nil {
		return 0
	}
	return s.bolt.j.Checkpoints()
}

// Settle folds into the file at path the journaled commits a crash left
// beside it, by opening the store once, so that the file alone holds them
// all: for a backup, a check or a copy of a store at rest. A file whose
// journal holds nothing it lacks is not written.
func Settle(path string) error {
	pending := false
	for _, name := range kv.JournalFiles(path) {
		if _, err := os.Stat(name); err == nil {
			pending = true
		}
	}
	if !pending {
		return nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: DefaultTimeout})
	if err != nil {
		return nil // the caller's own open reports what is wrong
	}
	pending, err = kv.Pending(db, path)
	_ = db.Close()
	if err != nil || !pending {
		return err
	}
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	return s.Close()
}

// DB is the bbolt handle, or nil on PostgreSQL. Commits still in the
// journal are not in it: Checkpoint first.
func (s *Store) DB() *bolt.DB {
	if s.bolt != nil {
		return s.bolt.db
	}
	return nil
}

// update and view run fn as bbolt's Update and View do, without wrapping it
// in a closure: a closure handed to bbolt escapes, one allocation per
// transaction that reading *bolt.Tx directly never paid.
func (b *boltBackend) update(fn func(tx kv.Tx) error) error {
	if b.j != nil {
		return b.j.Update(fn)
	}
	tx, err := b.db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // after Commit: ErrTxClosed, ignored
	if err := fn(kv.Bolt(tx)); err != nil {
		return err
	}
	return tx.Commit()
}

// updateFile is update for a transaction of many changes: past the
// journal, into the file (kv.Journaled.UpdateFile).
func (b *boltBackend) updateFile(fn func(tx kv.Tx) error) error {
	if b.j != nil {
		return b.j.UpdateFile(fn)
	}
	return b.update(fn)
}

func (b *boltBackend) view(fn func(tx kv.Tx) error) error {
	if b.j != nil {
		return b.j.View(fn)
	}
	tx, err := b.db.Begin(false)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(kv.Bolt(tx))
}

func (b *boltBackend) describe() Description { return Description{Kind: "bbolt", Location: b.path} }

// close writes bbolt's freelist in one last, empty commit, then closes.
// The store runs with NoFreelistSync (no freelist written per commit), and
// a file left without one makes the next open rebuild it by reading every
// page of the file: about a second of a 100,000-task store's open, on
// the path to its first answer (docs/decisions.md D46). bbolt reads a
// freelist it finds instead; after a crash the next open rebuilds it as
// before. A failed last commit only leaves that rebuild to the next open.
func (b *boltBackend) close() error {
	if b.j != nil {
		if err := b.j.Close(); err != nil {
			_ = b.db.Close()
			return err
		}
	}
	if !b.db.IsReadOnly() {
		b.db.NoFreelistSync = false
		_ = b.db.Update(func(*bolt.Tx) error { return nil })
	}
	return b.db.Close()
}
