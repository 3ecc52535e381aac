package store

// The PostgreSQL backend (CAIRN_STORE=postgres://…): the shared key-value
// layer on one table, core_kv, with every Update serialized cluster-wide by
// the core lock (the core_writers table, distinct from the admin area's
// lock, so the areas never wait for each other). Writes made with
// CommitShared run beside each other's on every server instead (shared
// updates, docs/decisions.md D40), drawing numbers outside the transaction
// and counting under per-server shards and grants; group commit still
// gathers concurrent calls of one server into one transaction, one lock
// round and one commit for all.

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// MigrationArea names the core area's migrations in cairn_migrations.
const MigrationArea = "core"

// Table holds every core bucket on PostgreSQL.
const Table = "core_kv"

// Writers is the table whose lock orders core updates: exclusively for
// most, shared by the writes that run beside each other's (CommitShared,
// docs/decisions.md D40). It replaced the advisory lock "cairncor".
const Writers = "core_writers"

// LockTimeout bounds the wait for another server's update on PostgreSQL.
const LockTimeout = 10 * time.Second

// Migrations are the core area's PostgreSQL schema versions, applied in
// order at start. Append new steps; never edit an applied one. The bucket
// layout inside the table is versioned apart, by user_version in meta, as
// in a bbolt file.
var Migrations = []pgmigrate.Step{
	{Version: 1, Name: "buckets", SQL: kv.TableSQL(Table)},
	// Idempotency records in two generations (idempotency.go): the age
	// index goes.
	{Version: 2, Name: "idempotency generations", SQL: "DELETE FROM " + Table + " WHERE bucket = 'idempotency_order' OR (bucket = 'meta' AND key = 'idempotency_seq'::bytea)"},
	// Chain heads beside their links (bolt.go, migrateV8).
	{Version: 3, Name: "chain heads with links", SQL: "INSERT INTO " + Table + " (bucket, key, value) SELECT 'chain_links', key || '\\xffffffffffffffff'::bytea, value FROM " + Table + " WHERE bucket = 'chain_heads' AND length(key) = 9; DELETE FROM " + Table + " WHERE bucket = 'chain_heads'"},
	// The writers' table, whose lock replaced the advisory lock (kv.PGConfig.Writers).
	{Version: 4, Name: "writers table", SQL: kv.WritersSQL(Writers)},
	// Idempotency records in rings by time (bolt.go, migrateV9): the
	// generations, their counts and the grants go.
	{Version: 5, Name: "idempotency by time", SQL: "DELETE FROM " + Table + " WHERE bucket IN ('idempotency', 'idempotency_alt', 'idempotency_grants') OR (bucket = 'meta' AND key IN ('idempotency_count'::bytea, 'idempotency_generation'::bytea, 'idempotency_since'::bytea, 'idempotency_granted'::bytea))"},
}

type pgBackend struct {
	*kv.PG
	where     string
	migration int
}

// OpenPostgres connects to the database at dsn, applies the core area's
// pending migrations (pgmigrate serializes servers starting at once) and
// records the layout version. Failures are ERR_INIT_FAILED errors naming
// the redacted URL.
func OpenPostgres(dsn string) (*Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
	defer cancel()
	where := pgmigrate.Redact(dsn)
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return nil, initFailed("core store: %v", err)
	}
	st, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations)
	if err != nil {
		pool.Close()
		return nil, initFailed("core store at %s: %v", where, err)
	}
	pg, err := kv.NewPG(pool, pgConfig(where))
	if err != nil {
		pool.Close()
		return nil, initFailed("core store: %v", err)
	}
	s := &Store{pg: &pgBackend{PG: pg, where: where, migration: st.Version}}
	// Buckets need no creating here; the layout version is recorded so a
	// newer layout refuses an older cairn, as a bbolt file does.
	err = s.Update(func(tx kv.Tx) error {
		meta := tx.Bucket([]byte(BucketMeta))
		if _, err := checkVersion(meta, where); err != nil {
			return err
		}
		s.version = len(migrations)
		return meta.Put(keyUserVersion, u64(uint64(s.version)))
	})
	if err != nil {
		pool.Close()
		if e, ok := errs.As(err); ok && e.Code == errs.InitFailed {
			return nil, e
		}
		return nil, initFailed("core store at %s: %v", where, err)
	}
	return s, nil
}

func (b *pgBackend) describe() Description {
	return Description{Kind: "postgres", Location: b.where, Migration: b.migration}
}

func (b *pgBackend) close() error {
	b.Close()
	return nil
}

// CopyFromBolt moves every pair of the bbolt store src into the core table
// of the empty database at dsn (applying the core migrations first), in
// one transaction under the core lock; a database whose core table holds
// anything is refused with an error naming "to".
func CopyFromBolt(ctx context.Context, src *bolt.DB, dsn string) (kv.Copied, error) {
	where := pgmigrate.Redact(dsn)
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return kv.Copied{}, errs.Invalidf("to", "reachable", "%v", err)
	}
	defer pool.Close()
	if _, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations); err != nil {
		return kv.Copied{}, initFailed("core store at %s: %v", where, err)
	}
	return kv.CopyBolt(ctx, src, pool, pgConfig(where))
}

// pgConfig is the core area's key-value table and lock on the database at
// where.
func pgConfig(where string) kv.PGConfig {
	return kv.PGConfig{Area: "core", Table: Table, Writers: Writers, Where: where, LockTimeout: LockTimeout}
}
