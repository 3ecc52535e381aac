package store

// The PostgreSQL backend (CAIRN_STORE=postgres://…): every bucket lives in
// one table, admin_kv (bucket, key, value), whose primary key orders keys
// bytewise as bbolt does. Every Update takes one transaction-scoped
// advisory lock before it reads anything, so updates run one at a time
// across every server on the database, exactly as they run one at a time
// across the processes sharing a bbolt file; that is what makes a rate-limit
// check and its count, a webhook delivery's claim and every id counter
// atomic cluster-wide. A server that dies mid-update loses its connection,
// PostgreSQL rolls the transaction back and releases the lock. Views read
// one REPEATABLE READ snapshot and take no lock.

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// writerLock is the advisory lock of admin updates ("cairnadm").
const writerLock int64 = 0x636169726e61646d

// txTimeout bounds one transaction, the wait for the writer lock included.
const txTimeout = 30 * time.Second

// cursorPage is how many rows a cursor fetches at once.
const cursorPage = 64

type pgBackend struct {
	pool    *pgxpool.Pool
	where   string
	version int
	lockMax time.Duration
}

// OpenPostgres connects to the database at dsn and applies the admin
// area's pending migrations (pgmigrate serializes servers starting at
// once). Failures are ERR_INIT_FAILED errors naming the redacted URL.
func OpenPostgres(dsn string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), txTimeout)
	defer cancel()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "admin store: %v", err)
	}
	st, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations)
	if err != nil {
		pool.Close()
		return nil, errs.Newf(500, errs.InitFailed, "admin store at %s: %v", pgmigrate.Redact(dsn), err)
	}
	return &Store{b: &pgBackend{pool: pool, where: pgmigrate.Redact(dsn), version: st.Version, lockMax: opts.LockTimeout}}, nil
}

func (b *pgBackend) describe() Description {
	return Description{Kind: "postgres", Location: b.where, SchemaVersion: b.version}
}

func (b *pgBackend) close() { b.pool.Close() }

func (b *pgBackend) update(fn func(tx Tx) error) error {
	return b.run(pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, true, fn)
}

func (b *pgBackend) view(fn func(tx Tx) error) error {
	return b.run(pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

func (b *pgBackend) run(opts pgx.TxOptions, writable bool, fn func(tx Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), txTimeout)
	defer cancel()
	tx, err := b.pool.BeginTx(ctx, opts)
	if err != nil {
		return b.unavailable(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if writable {
		_, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)",
			b.lockMax.String(), writerLock)
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "55P03" {
				return errs.Newf(503, errs.Unavailable, "the admin store %s stayed locked by another server for %s; retry, or look for a stuck cairn server", b.where, b.lockMax)
			}
			return b.unavailable(err)
		}
	}
	t := &pgTx{ctx: ctx, tx: tx, writable: writable}
	ferr := fn(t)
	if t.err != nil {
		return t.err
	}
	if ferr != nil {
		return ferr
	}
	if err := tx.Commit(ctx); err != nil {
		return b.unavailable(err)
	}
	return nil
}

func (b *pgBackend) unavailable(err error) error {
	return errs.Newf(503, errs.Unavailable, "the admin store %s did not answer: %v", b.where, err)
}

// pgTx is one transaction. Bucket methods cannot return errors (bbolt's
// Get cannot fail), so the first database error is kept here and the
// transaction fails with it, whatever fn returned.
type pgTx struct {
	ctx      context.Context
	tx       pgx.Tx
	writable bool
	err      error
	// writes counts changes, so cursors know their buffered rows are stale.
	writes int
}

func (t *pgTx) fail(err error) error {
	if t.err == nil {
		t.err = errs.Newf(503, errs.Unavailable, "admin store: %v", err)
	}
	return t.err
}

func (t *pgTx) Bucket(name []byte) Bucket { return &pgBucket{t: t, name: string(name)} }

type pgBucket struct {
	t    *pgTx
	name string
}

func (b *pgBucket) Get(key []byte) []byte {
	if b.t.err != nil {
		return nil
	}
	var v []byte
	err := b.t.tx.QueryRow(b.t.ctx, "SELECT value FROM admin_kv WHERE bucket = $1 AND key = $2", b.name, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		b.t.fail(err)
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	return v
}

func (b *pgBucket) writable() error {
	if b.t.err != nil {
		return b.t.err
	}
	if !b.t.writable {
		return errors.New("admin store: write in a read-only transaction")
	}
	b.t.writes++
	return nil
}

func (b *pgBucket) Put(key, value []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	_, err := b.t.tx.Exec(b.t.ctx, `INSERT INTO admin_kv (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`, b.name, key, value)
	if err != nil {
		return b.t.fail(err)
	}
	return nil
}

func (b *pgBucket) Delete(key []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	if _, err := b.t.tx.Exec(b.t.ctx, "DELETE FROM admin_kv WHERE bucket = $1 AND key = $2", b.name, key); err != nil {
		return b.t.fail(err)
	}
	return nil
}

// ForEach reads the whole bucket before calling fn, so fn may run its own
// queries on the same connection.
func (b *pgBucket) ForEach(fn func(k, v []byte) error) error {
	rows, err := b.rows("SELECT key, value FROM admin_kv WHERE bucket = $1 ORDER BY key", b.name)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := fn(r.k, r.v); err != nil {
			return err
		}
	}
	return nil
}

type pair struct{ k, v []byte }

func (b *pgBucket) rows(sql string, args ...any) ([]pair, error) {
	if b.t.err != nil {
		return nil, b.t.err
	}
	rs, err := b.t.tx.Query(b.t.ctx, sql, args...)
	if err != nil {
		return nil, b.t.fail(err)
	}
	var out []pair
	for rs.Next() {
		var p pair
		if err := rs.Scan(&p.k, &p.v); err != nil {
			rs.Close()
			return nil, b.t.fail(err)
		}
		out = append(out, p)
	}
	if err := rs.Err(); err != nil {
		return nil, b.t.fail(err)
	}
	return out, nil
}

func (b *pgBucket) Cursor() Cursor { return &pgCursor{b: b} }

// pgCursor reads a page of rows at a time in the direction it moves and
// refetches from its position when the direction changes, the page runs
// out or the transaction has written since the page was read.
type pgCursor struct {
	b      *pgBucket
	page   []pair
	i      int
	fwd    bool
	full   bool // the page hit cursorPage rows, so more may follow
	writes int
	at     []byte // current key; nil before the first move or past an end
}

func (c *pgCursor) fetch(fwd bool, from []byte, inclusive bool) (key, value []byte) {
	op, order := ">", "ASC"
	if !fwd {
		op, order = "<", "DESC"
	}
	if inclusive {
		op += "="
	}
	sql := "SELECT key, value FROM admin_kv WHERE bucket = $1 ORDER BY key " + order + " LIMIT $2"
	args := []any{c.b.name, cursorPage}
	if from != nil {
		sql = "SELECT key, value FROM admin_kv WHERE bucket = $1 AND key " + op + " $3 ORDER BY key " + order + " LIMIT $2"
		args = append(args, from)
	}
	rows, err := c.b.rows(sql, args...)
	c.page, c.i, c.fwd, c.full, c.writes = rows, 0, fwd, len(rows) == cursorPage, c.b.t.writes
	if err != nil || len(rows) == 0 {
		c.page, c.at = nil, nil
		return nil, nil
	}
	c.at = rows[0].k
	return rows[0].k, rows[0].v
}

func (c *pgCursor) step(fwd bool) (key, value []byte) {
	if c.at == nil {
		return nil, nil
	}
	if c.fwd == fwd && c.writes == c.b.t.writes && c.i+1 < len(c.page) {
		c.i++
		c.at = c.page[c.i].k
		return c.page[c.i].k, c.page[c.i].v
	}
	if c.fwd == fwd && c.writes == c.b.t.writes && !c.full {
		c.at = nil
		return nil, nil
	}
	return c.fetch(fwd, c.at, false)
}

func (c *pgCursor) First() (key, value []byte)           { return c.fetch(true, nil, true) }
func (c *pgCursor) Last() (key, value []byte)            { return c.fetch(false, nil, true) }
func (c *pgCursor) Seek(seek []byte) (key, value []byte) { return c.fetch(true, seek, true) }
func (c *pgCursor) Next() (key, value []byte)            { return c.step(true) }
func (c *pgCursor) Prev() (key, value []byte)            { return c.step(false) }
