// Package store is the core (Area A) store: projects, tasks and their
// indexes, the thought and event chains and audit sessions, as ordered
// buckets of the shared key-value layer (internal/kv). Two backends hold
// them (docs/decisions.md D26): a bbolt file in the data dir (bolt.go, the default)
// or PostgreSQL (postgres.go, CAIRN_STORE=postgres://…), where several cairn
// servers share one truth.
//
// Everything that must change together (a task and its chain link, a counter
// and the record it numbers) is written in one transaction, so the store
// exposes Update and View rather than a narrower interface. Both backends
// run every Update alone among all writers of every process or server and
// commit it durably (bbolt fsyncs every commit and NoSync is never set;
// PostgreSQL commits synchronously), because an acknowledged write must
// survive SIGKILL.
package store

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
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
	// bytes) → the link as JSON; and, since schema v8, each chain's head
	// under position 2⁶⁴−1, right after its last link: that position (8
	// bytes) and hash (32 raw bytes), so an append reads one key instead of
	// seeking the chain's end, and writes its link and head on one page.
	BucketChainLinks = "chain_links"
	// bucketChainHeads held the heads up to schema v7.
	bucketChainHeads = "chain_heads"
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
	// bucketIdempotency and bucketIdempotencyAlt were the two generations
	// of idempotency records of schemas v7 and v8, bounded by count;
	// bucketIdempotencyOrder ordered the keys by age up to v6. Schema v9
	// keeps them in rings by time (idempotency.go, IdempotencyBuckets).
	bucketIdempotency      = "idempotency"
	bucketIdempotencyAlt   = "idempotency_alt"
	bucketIdempotencyOrder = "idempotency_order"

	// BucketTaskTrigrams indexes the lower-cased title and description of
	// every task for task_list's search (schema v4): trigram (3 bytes),
	// task number (8 bytes) → the trigram's positions in the folded text
	// (uvarint deltas; empty in postings written before positions, which a
	// search verifies instead). The tasks package fills it on first open of
	// an older store and keeps it in each task write's transaction.
	BucketTaskTrigrams = "idx_task_trigram"

	// BucketTaskSorted holds task_list's sorted indexes (schema v5): sort
	// variant (1 byte), scope (0x00 for every project, or 0x01, slug,
	// 0x00), status code, priority code, sort value (8 order-preserving
	// bytes), task number (8 bytes) → empty.
	BucketTaskSorted = "idx_task_sorted"
	// BucketTaskCounts holds task_list's total_count counters (schema v5):
	// scope or facet scope → one 8-byte count per (status, priority) cell.
	BucketTaskCounts = "task_counts"
	// BucketTaskCountShards holds, on PostgreSQL only, the changes to
	// BucketTaskCounts that servers made beside each other (kv.Tx.Shard):
	// scope, shard id (8 bytes) → one signed 8-byte change per cell, added
	// to the counters by readers and folded into them at open.
	BucketTaskCountShards = "task_count_shards"
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
	// BucketTaskSearchText holds, per task, what task_list's search checks
	// and sorts on (schema v6): task number (8 bytes) → status, priority,
	// times, progress, project and the lower-cased title and description
	// (see the tasks package), so verifying a search candidate reads no
	// task record.
	BucketTaskSearchText = "task_search_text"

	// BucketTaskTrigramPending lists the tasks whose trigram postings are
	// not written yet (task number → the text the postings hold, see the
	// tasks package): a write records its task here, one key, and the
	// postings of many tasks are written later in one transaction. Created
	// on open, like BucketLastProject.
	BucketTaskTrigramPending = "idx_task_trigram_pending"

	// BucketTaskListPending lists the tasks whose task_list index entries
	// (sorted indexes, counters, facets) are not moved yet (task number →
	// the state those entries hold, see the tasks package): a write
	// records its task here, one key, and the entries of many tasks move
	// later in one transaction. Created on open, like BucketLastProject.
	BucketTaskListPending = "idx_task_list_pending"

	// BucketLastProject remembers, per caller, the project they used last
	// (D7). It is created on open rather than by a versioned migration:
	// older builds ignore a bucket they do not know.
	BucketLastProject = "client_last_project"

	// BucketLeases mirrors the sdd area's open execution leases, by task
	// (docs/decisions.md D39): core hears them on the bus, since no area
	// opens another's store. Created on open, like BucketLastProject.
	BucketLeases = "sdd_leases"

	// BucketImportJournal holds an import that spans several transactions
	// (docs/decisions.md D41): its validated plan and the numbers of the
	// tasks made so far, until the transaction of its last task removes
	// it; an import a crash interrupted is completed from it on the next
	// open. Created on open, like BucketLastProject.
	BucketImportJournal = "import_journal"
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

// Store is an open core store. It is safe for concurrent use.
type Store struct {
	// Exactly one backend is set. They are concrete fields, not an
	// interface: a function handed to an interface method escapes, which
	// would cost every Update and View an allocation for its closure.
	bolt    *boltBackend
	pg      *pgBackend
	version int
	// warnings are what the file's check at open found and survived.
	warnings []boltcheck.Problem
	group    group
	// outbox hands the events a group commit recorded to this process's
	// drainer and removes handled entries with a later commit.
	outbox outboxState
	// commits counts durable commits, views read transactions, for
	// benchmarks and tests.
	commits, views atomic.Uint64
}

// Description says where a store keeps its data, for health and logs.
type Description struct {
	// Kind is "bbolt" or "postgres".
	Kind string `json:"kind"`
	// Location is the file, or the database URL without its password.
	Location string `json:"location"`
	// Migration is the PostgreSQL migration version (0 on bbolt, whose
	// layout version is UserVersion).
	Migration int `json:"migration,omitempty"`
}

func initFailed(format string, args ...any) *errs.Error {
	return errs.Newf(500, errs.InitFailed, format, args...)
}

// checkVersion reads the layout version in meta: an absent one is 0, and a
// version newer than this build is refused.
func checkVersion(meta kv.Bucket, where string) (int, error) {
	raw := meta.Get(keyUserVersion)
	if raw == nil {
		return 0, nil
	}
	if len(raw) != 8 {
		return 0, initFailed("store %s has a corrupt schema version; restore it from a backup or set CAIRN_DATA_DIR to a fresh directory", where)
	}
	v := int(binary.BigEndian.Uint64(raw))
	if v > len(migrations) {
		return 0, initFailed("store %s has schema version %d, newer than this cairn (%d); upgrade cairn", where, v, len(migrations))
	}
	return v, nil
}

// UserVersion is the layout version of the open store.
func (s *Store) UserVersion() int { return s.version }

// Describe says where the store keeps its data.
func (s *Store) Describe() Description {
	if s.pg != nil {
		return s.pg.describe()
	}
	return s.bolt.describe()
}

// Local reports whether the store is a file on this machine (bbolt), whose
// reads answer without waiting on a network.
func (s *Store) Local() bool { return s.pg == nil }

// Path is the file the store lives in, or its database URL without the
// password on PostgreSQL.
func (s *Store) Path() string { return s.Describe().Location }

// Close releases the file and its lock, or the database connections,
// after removing the handled outbox entries no commit has removed yet.
func (s *Store) Close() error {
	s.removeHandledNow()
	if s.pg != nil {
		return s.pg.close()
	}
	return s.bolt.close()
}

// Update runs fn in one durable read-write transaction, alone among all
// writers; fn's error rolls everything back.
func (s *Store) Update(fn func(tx kv.Tx) error) error {
	return s.update(false, fn)
}

// UpdateLarge is Update for a transaction of many changes (an import's
// batch): on bbolt it commits to the file itself rather than to the
// journal (docs/decisions.md D47), which would hold its changes twice in
// memory and gain nothing from it.
func (s *Store) UpdateLarge(fn func(tx kv.Tx) error) error {
	return s.updateLarge(false, fn)
}

// UpdateLargeShared is UpdateLarge for a write UpdateShared's rules allow
// to run beside other servers' on PostgreSQL.
func (s *Store) UpdateLargeShared(fn func(tx kv.Tx) error) error {
	return s.updateLarge(true, fn)
}

func (s *Store) updateLarge(shared bool, fn func(tx kv.Tx) error) error {
	if s.pg != nil {
		return s.update(shared, fn)
	}
	err := s.bolt.updateFile(fn)
	if err == nil {
		s.commits.Add(1)
	}
	return err
}

// UpdateShared is Update for a write that, on PostgreSQL, may run beside
// other servers' writes, under CommitShared's rules (docs/decisions.md
// D40). fn may run more than once; only its last run counts.
func (s *Store) UpdateShared(fn func(tx kv.Tx) error) error {
	return s.update(true, fn)
}

// update runs fn in a durable read-write transaction; a shared one, on
// PostgreSQL, runs beside other servers' shared updates (kv.PG.UpdateShared)
// and may run fn more than once.
func (s *Store) update(shared bool, fn func(tx kv.Tx) error) error {
	var err error
	switch {
	case s.pg != nil && shared:
		err = s.pg.UpdateShared(fn)
	case s.pg != nil:
		err = s.pg.Update(fn)
	default:
		err = s.bolt.update(fn)
	}
	if err == nil {
		s.commits.Add(1)
	}
	return err
}

// SharedStats says how shared updates went (zero on bbolt, where there are
// none).
func (s *Store) SharedStats() kv.SharedStats {
	if s.pg == nil {
		return kv.SharedStats{}
	}
	return s.pg.Stats()
}

// Views counts the read transactions this Store ran since it was opened.
func (s *Store) Views() uint64 { return s.views.Load() }

// Commits counts the durable commits this Store made since it was opened.
func (s *Store) Commits() uint64 { return s.commits.Load() }

// View runs fn in a read-only transaction with a consistent snapshot.
func (s *Store) View(fn func(tx kv.Tx) error) error {
	s.views.Add(1)
	if s.pg != nil {
		return s.pg.View(fn)
	}
	return s.bolt.view(fn)
}

// Latency measures one trivial read (the layout version), for health.
func (s *Store) Latency() (time.Duration, error) {
	start := time.Now()
	err := s.View(func(tx kv.Tx) error {
		_ = tx.Bucket([]byte(BucketMeta)).Get(keyUserVersion)
		return nil
	})
	return time.Since(start), err
}

// NextID returns the next number of the store-wide counter name (for
// example CounterTask), starting at 1. It must run inside the transaction
// that writes the numbered record: on bbolt a rolled-back write rolls the
// counter back with it; inside a shared update on PostgreSQL the number
// is drawn as a sequence's is (kv.Tx.IncrementEach), and one a failed
// write drew is skipped. Either way a number is never handed out twice.
func NextID(tx kv.Tx, name string) (uint64, error) {
	return next(tx, BucketCounters, name)
}

// NextTaskNumbers returns a new task's number and its project's next
// sequence number, drawn together (one round trip inside a shared update
// on PostgreSQL). With chained, the record number of the task's first
// chain link (CounterRecord) is drawn ahead in the same round trip.
func NextTaskNumbers(tx kv.Tx, project string, chained bool) (num, seq uint64, err error) {
	if chained {
		if err := tx.DrawAhead(counterKey(BucketCounters, CounterTask), counterKey(BucketProjectSeq, project), counterKey(BucketCounters, CounterRecord)); err != nil {
			return 0, 0, fmt.Errorf("store: task counters: %w", err)
		}
	}
	n, err := tx.IncrementEach(counterKey(BucketCounters, CounterTask), counterKey(BucketProjectSeq, project))
	if err != nil {
		return 0, 0, fmt.Errorf("store: task counters: %w", err)
	}
	return n[0], n[1], nil
}

// DrawAhead draws the next numbers of the store-wide counters names
// together, for the transaction's NextID calls to take (kv.Tx.DrawAhead).
func DrawAhead(tx kv.Tx, names ...string) error {
	keys := make([]kv.Key, len(names))
	for i, name := range names {
		keys[i] = counterKey(BucketCounters, name)
	}
	return tx.DrawAhead(keys...)
}

// PeekID returns the last number handed out by counter name (0 if none).
func PeekID(tx kv.Tx, name string) uint64 {
	b := tx.Bucket([]byte(BucketCounters))
	if !b.Exists() {
		return 0
	}
	if raw := b.Get([]byte(name)); len(raw) == 8 {
		return binary.BigEndian.Uint64(raw)
	}
	return 0
}

// next raises a counter; in a shared update on PostgreSQL it is drawn
// outside the transaction (kv.Tx.IncrementEach), so servers writing at
// once never wait for each other's counter.
func next(tx kv.Tx, bucket, name string) (uint64, error) {
	if !tx.Bucket([]byte(bucket)).Exists() {
		return 0, fmt.Errorf("store: bucket %s missing", bucket)
	}
	n, err := tx.IncrementEach(counterKey(bucket, name))
	if err != nil {
		return 0, fmt.Errorf("store: counter %s/%s: %w", bucket, name, err)
	}
	return n[0], nil
}

// counterKey names a counter for kv's draws. Every counter but the record
// numbers keeps what an attempt of a shared update drew for the next
// (kv.Key.Keep), so ids have no gap when a write runs again; record
// numbers order a chain's links and must be drawn after the snapshot that
// read the chain's head, so a rerun draws them afresh.
func counterKey(bucket, name string) kv.Key {
	return kv.Key{Bucket: []byte(bucket), Key: []byte(name), Keep: !(bucket == BucketCounters && name == CounterRecord)}
}

// U64 encodes n as 8 big-endian bytes, the key form of numbered records:
// big endian keeps the stores' byte order equal to numeric order.
func U64(n uint64) []byte { return u64(n) }

func u64(n uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, n)
	return b
}
