package store

// The PostgreSQL backend (CAIRN_STORE=postgres://…): the shared key-value
// layer (internal/kv) on one table, admin_kv, with every Update serialized
// cluster-wide by the admin lock. That is what makes a rate-limit check and
// its count, a webhook delivery's claim and every id counter atomic across
// servers.

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// writerLock is the advisory lock of admin updates ("cairnadm").
const writerLock int64 = 0x636169726e61646d

// table holds every admin bucket on PostgreSQL.
const table = "admin_kv"

type pgBackend struct {
	*kv.PG
	where   string
	version int
}

// OpenPostgres connects to the database at dsn and applies the admin
// area's pending migrations (pgmigrate serializes servers starting at
// once). Failures are ERR_INIT_FAILED errors naming the redacted URL.
func OpenPostgres(dsn string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
	defer cancel()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "admin store: %v", err)
	}
	where := pgmigrate.Redact(dsn)
	st, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations)
	if err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "admin store at %s: %v", where, err)
	}
	pg, err := kv.NewPG(pool, pgConfig(where, opts.LockTimeout))
	if err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "admin store: %v", err)
	}
	return &Store{b: &pgBackend{PG: pg, where: where, version: st.Version}}, nil
}

func (b *pgBackend) describe() Description {
	return Description{Kind: "postgres", Location: b.where, SchemaVersion: b.version}
}

func (b *pgBackend) close() { b.Close() }

func (b *pgBackend) update(fn func(tx Tx) error) error { return b.Update(fn) }

func (b *pgBackend) view(fn func(tx Tx) error) error { return b.View(fn) }

func (b *pgBackend) peek(fn func(tx Tx) error) error { return b.Peek(fn) }

// getOne reads one record in a single statement, without the BEGIN and
// COMMIT round trips of a View: a hot path's lookup (the key record of
// every rate-limit check) needs no snapshot beyond its own row.
func (b *pgBackend) getOne(bucket string, key []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
	defer cancel()
	var v []byte
	err := b.Pool().QueryRow(ctx, "SELECT value FROM "+table+" WHERE bucket = $1 AND key = $2", bucket, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, errs.Newf(503, errs.Unavailable, "the admin store %s did not answer: %v", b.where, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// pgConfig is the admin area's key-value table and lock on the database
// at where.
func pgConfig(where string, lockTimeout time.Duration) kv.PGConfig {
	return kv.PGConfig{Area: "admin", Table: table, Lock: writerLock, Where: where, LockTimeout: lockTimeout}
}
