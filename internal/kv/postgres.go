package kv

// The PostgreSQL backend: every bucket of an area lives in one table
// (bucket, key, value) whose primary key orders keys bytewise as bbolt
// does. Every Update takes the area's lock before it reads anything (its
// transaction-scoped advisory lock, or its writers' table locked
// exclusively), so an area's updates run one at a time across every server
// on the database, exactly as they run one at a time across the processes
// sharing a bbolt file; that is what keeps id counters, sequences and
// chain heads atomic cluster-wide. Shared updates (pgshared.go) run beside
// each other instead, and keep the same outcome another way. A server that
// dies mid-update loses its connection; PostgreSQL rolls the transaction
// back and releases the lock. Views read one REPEATABLE READ snapshot and
// take no lock.
//
// Because an update holds the lock for as long as it talks to the
// database, it talks as little as it can (docs/decisions.md D40): a key is
// read from the database at most once per transaction and its writes are
// kept in memory (pgcache.go), then sent as two statements (every upsert in
// one, every delete in another) before a range read of their bucket and
// with the commit, whose round trip they share (pgtrip.go).

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// TxTimeout bounds the wait for a connection and, in a transaction, for
// each answer of the database (pgstall.go): a transaction that keeps
// getting answers runs to its end however long it takes.
const TxTimeout = 30 * time.Second

// cursorPage is how many rows a cursor fetches at once.
const cursorPage = 64

// PGConfig names an area's table and lock.
type PGConfig struct {
	// Area names the area in messages ("admin" → "the admin store …").
	Area string
	// Table is the area's key-value table (lower-case letters and _).
	Table string
	// Lock is the area's advisory lock id; each area has its own, so one
	// area's writers never wait for another's. Unused when Writers is set.
	Lock int64
	// Writers, when set, is the table whose lock orders the area's
	// updates instead of Lock (WritersSQL creates it): an update locks it
	// exclusively, a shared update (UpdateShared) in a mode other shared
	// updates do not conflict with (pgshared.go).
	Writers string
	// Where is the database URL without its password, for messages.
	Where string
	// LockTimeout bounds the wait for the writer lock.
	LockTimeout time.Duration
}

// PG runs an area's transactions on PostgreSQL.
type PG struct {
	pool *pgxpool.Pool
	cfg  PGConfig
	sql  statements
	// shard names this server's totals in shared updates (Tx.Shard).
	shard [8]byte
	// draws is the small pool counters are drawn on outside shared
	// updates' transactions (pgshared.go), opened on the first draw.
	drawsOnce sync.Once
	draws     *pgxpool.Pool
	drawsErr  error
	stats     sharedCounters
	// stall bounds the wait for one answer in a transaction (TxTimeout;
	// tests shorten it).
	stall time.Duration
}

// statements are an area's queries with its table name filled in once.
type statements struct {
	get, putMany, delMany, all, count, clear string
	fromAsc, fromDesc, firstAsc              string
	lastDesc, afterAsc, beforeDesc           string
	draw, getMany                            string
}

var tableName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]*$`) })

// TableSQL creates an area's key-value table; areas put it in their first
// migration.
func TableSQL(table string) string {
	return fmt.Sprintf(`CREATE TABLE %s (
		bucket text  NOT NULL,
		key    bytea NOT NULL,
		value  bytea NOT NULL,
		PRIMARY KEY (bucket, key)
	)`, table)
}

// check refuses table names that are not plain identifiers.
func (c PGConfig) check() error {
	for _, name := range []string{c.Table, c.Writers} {
		if (name != "" || name == c.Table) && !tableName().MatchString(name) {
			return fmt.Errorf("kv: table name %q is not a plain lower-case identifier", name)
		}
	}
	return nil
}

// exclusiveSQL takes the area's writers' lock exclusively, for a whole
// transaction.
func (c PGConfig) exclusiveSQL() string {
	if c.Writers != "" {
		return "LOCK TABLE " + c.Writers + " IN EXCLUSIVE MODE"
	}
	return fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", c.Lock)
}

// NewPG runs transactions on pool for the area cfg names; the table must
// exist (the area's migrations create it).
func NewPG(pool *pgxpool.Pool, cfg PGConfig) (*PG, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = 5 * time.Second
	}
	t := cfg.Table
	sel := "SELECT key, value FROM " + t + " WHERE bucket = $1"
	p := &PG{pool: pool, cfg: cfg, stall: TxTimeout, sql: statements{
		get: "SELECT value FROM " + t + " WHERE bucket = $1 AND key = $2",
		putMany: "INSERT INTO " + t + ` (bucket, key, value)
			SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])
			ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`,
		delMany: "DELETE FROM " + t + ` AS t USING unnest($1::text[], $2::bytea[]) AS d(bucket, key)
			WHERE t.bucket = d.bucket AND t.key = d.key`,
		clear:      "DELETE FROM " + t + " WHERE bucket = $1",
		count:      "SELECT count(*) FROM " + t + " WHERE bucket = $1",
		all:        sel + " ORDER BY key",
		firstAsc:   sel + " ORDER BY key ASC LIMIT $2",
		lastDesc:   sel + " ORDER BY key DESC LIMIT $2",
		fromAsc:    sel + " AND key >= $3 ORDER BY key ASC LIMIT $2",
		fromDesc:   sel + " AND key <= $3 ORDER BY key DESC LIMIT $2",
		afterAsc:   sel + " AND key > $3 ORDER BY key ASC LIMIT $2",
		beforeDesc: sel + " AND key < $3 ORDER BY key DESC LIMIT $2",
		draw: "INSERT INTO " + t + ` AS c (bucket, key, value)
			SELECT b, k, int8send(1::bigint) FROM unnest($1::text[], $2::bytea[]) AS d(b, k)
			ON CONFLICT (bucket, key) DO UPDATE SET value = int8send(('x' || encode(c.value, 'hex'))::bit(64)::bigint + 1)
			RETURNING bucket, key, value`,
		// One index lookup per key, whatever plan a prepared statement
		// settles on: LIMIT keeps the subquery from being flattened into
		// a join the planner could answer with a scan of the table.
		getMany: "SELECT c.bucket, c.key, c.value FROM unnest($1::text[], $2::bytea[]) AS d(b, k), LATERAL (SELECT bucket, key, value FROM " + t + " WHERE bucket = d.b AND key = d.k LIMIT 1) AS c",
	}}
	if _, err := rand.Read(p.shard[:]); err != nil {
		return nil, err
	}
	return p, nil
}

// Pool is the connection pool, for an area's own queries.
func (p *PG) Pool() *pgxpool.Pool { return p.pool }

// Close closes the pools.
func (p *PG) Close() {
	p.drawsOnce.Do(func() {}) // no draw pool opens after Close
	if p.draws != nil {
		p.draws.Close()
	}
	p.pool.Close()
}

// Update runs fn in one transaction, alone among the area's updates on
// every server; fn's error rolls everything back.
func (p *PG) Update(fn func(tx Tx) error) error {
	return p.run(modeAlone, fn)
}

// View runs fn on one consistent snapshot.
func (p *PG) View(fn func(tx Tx) error) error {
	return p.run(modeView, fn)
}

// The statements that frame a transaction. Each travels in the same round
// trip as its neighbour (pgtrip.go): an update's begin with its lock, a
// view's begin with its first read, the commit with the last writes.
const (
	beginUpdate = "BEGIN ISOLATION LEVEL READ COMMITTED"
	beginView   = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	takeLock    = "SELECT set_config('lock_timeout', $1, true), pg_advisory_xact_lock($2)"
)

// open takes a connection for a transaction; release returns it.
func (p *PG) open(writable bool) (t *pgTx, release func(), err error) {
	ctx, cancel := context.WithTimeout(context.Background(), TxTimeout)
	conn, err := p.pool.Acquire(ctx)
	cancel()
	if err != nil {
		return nil, nil, p.unavailable(err)
	}
	guard := newStallGuard(p.stall)
	t = &pgTx{ctx: guard.ctx, guard: guard, conn: conn, writable: writable, p: p, begin: beginView}
	// A connection left inside a transaction (a failed rollback) is closed
	// by Release rather than handed to the next caller.
	return t, func() { conn.Release(); guard.end() }, nil
}

func (p *PG) run(mode txMode, fn func(tx Tx) error) error {
	var carry map[cacheKey][]uint64
	for attempt := 1; ; attempt++ {
		again, err := p.attempt(mode, fn, &carry)
		if again == modeView {
			return err
		}
		// A shared update that conflicted with another runs again; after
		// a few conflicts, or when fn asked to run alone, it runs alone,
		// where nothing can conflict with it.
		if attempt >= sharedAttempts {
			again = modeAlone
		}
		mode = again
	}
}

// attempt runs fn once in mode; again is the mode to run it in once more,
// or modeView when this attempt's outcome is final.
func (p *PG) attempt(mode txMode, fn func(tx Tx) error, carry *map[cacheKey][]uint64) (again txMode, err error) {
	t, release, err := p.open(mode != modeView)
	if err != nil {
		return modeView, err
	}
	defer release()
	// Numbers an earlier attempt drew for kept counters come first.
	t.ahead = *carry
	for ck := range t.ahead {
		if t.kept == nil {
			t.kept = map[cacheKey]bool{}
		}
		t.kept[ck] = true
	}
	defer func() { *carry = t.carry() }()
	if mode != modeView {
		if err := t.lock(mode); err != nil {
			return modeView, err
		}
	}
	ferr := fn(Tx{pg: t})
	if ferr == nil && t.err == nil {
		t.commit()
		if t.err == nil {
			if mode == modeShared {
				p.stats.shared.Add(1)
			}
			return modeView, nil
		}
	}
	t.rollback()
	switch {
	case t.alone:
		p.stats.alone.Add(1)
		return modeAlone, t.err
	case mode == modeShared && conflicted(t.cause):
		p.stats.conflicts.Add(1)
		return modeShared, t.err
	case t.err != nil:
		return modeView, t.err
	}
	return modeView, ferr
}

func (p *PG) unavailable(err error) error {
	return errs.Newf(503, errs.Unavailable, "the %s store %s did not answer: %v", p.cfg.Area, p.cfg.Where, err)
}

// pgTx is one transaction. Bucket methods cannot return errors (bbolt's
// Get cannot fail), so the first database error is kept here and the
// transaction fails with it, whatever fn returned.
type pgTx struct {
	// ctx is guard's: cancelled when the database stops answering.
	ctx   context.Context
	guard *stallGuard
	conn  *pgxpool.Conn
	p     *PG
	// begin is the statement that opens the transaction while it waits to
	// go with the first read; "" once sent.
	begin string
	// peek is set in a Peek (pgpeek.go), which counts its reads.
	peek      bool
	peekReads int
	peekAgain bool
	writable  bool
	err       error
	// cause is the database's error behind err, which says whether a
	// shared update conflicted (pgshared.go).
	cause error
	// shared is set in a shared update; alone once fn asked to run alone.
	shared, alone bool
	// ahead are counters' numbers drawn ahead (Tx.DrawAhead), or carried
	// from an earlier attempt; kept marks the counters whose numbers are
	// carried, and handed lists those handed out (pgshared.go).
	ahead  map[cacheKey][]uint64
	kept   map[cacheKey]bool
	handed []handedOut
	// writes counts changes, so cursors know their buffered rows are stale.
	writes int
	// keys are the pairs this transaction has read or written (pgcache.go).
	keys keyCache
	// ranges are the range reads made since the last write (rangesAt is
	// the write count they were made at), answered again from memory.
	ranges   map[string][]pair
	rangesAt int
	// cleared are bucket clears not yet sent; they go before the writes
	// keys holds, which all came after them.
	cleared []string
}

// flush sends the cleared buckets and the changed keys in one batch; the
// first failure fails the transaction.
func (t *pgTx) flush() { t.flushBucket("") }

// flushBucket sends what a range read of bucket name needs in the
// database: the cleared buckets and name's changed keys (every bucket's
// when name is "").
func (t *pgTx) flushBucket(name string) {
	if t.err != nil {
		return
	}
	if batch := t.pending(name); batch.Len() > 0 {
		if _, err := t.sendBatch(batch); err != nil {
			t.fail(err)
		}
	}
}

// pending is a batch of the writes a range read of bucket name needs sent.
func (t *pgTx) pending(name string) *pgx.Batch {
	batch := &pgx.Batch{}
	for _, c := range t.cleared {
		batch.Queue(t.p.sql.clear, c)
	}
	t.cleared = nil
	t.keys.drain(batch, t.p.sql.putMany, t.p.sql.delMany, name)
	return batch
}

func (t *pgTx) fail(err error) error {
	if t.err == nil {
		t.cause = err
		t.err = errs.Newf(503, errs.Unavailable, "%s store: %v", t.p.cfg.Area, t.guard.explain(err))
	}
	return t.err
}

func (t *pgTx) clear(name string) error {
	b := &pgBucket{t: t, name: name}
	if err := b.writable(); err != nil {
		return err
	}
	// Writes made before the clear go first; reads of the bucket after it
	// find nothing cached and send the clear before they ask.
	t.flushBucket(name)
	t.keys.forget(name)
	t.cleared = append(t.cleared, name)
	return nil
}

// clone copies p into a new non-nil slice.
func clone(p []byte) []byte {
	out := make([]byte, len(p))
	copy(out, p)
	return out
}

type pgBucket struct {
	t    *pgTx
	name string
}

func (b *pgBucket) get(key []byte) []byte {
	if b.t.err != nil {
		return nil
	}
	if v, ok := b.t.keys.get(b.name, key); ok {
		return v
	}
	if len(b.t.cleared) > 0 {
		b.t.flushBucket(b.name)
	}
	var v []byte
	found, err := b.t.queryRow(b.t.p.sql.get, []any{b.name, key}, &v)
	if err != nil {
		b.t.fail(err)
		return nil
	}
	if !found {
		b.t.keys.read(b.name, key, nil)
		return nil
	}
	if v == nil {
		v = []byte{}
	}
	b.t.keys.read(b.name, key, v)
	return v
}

func (b *pgBucket) writable() error {
	if b.t.err != nil {
		return b.t.err
	}
	if !b.t.writable {
		return fmt.Errorf("%s store: write in a read-only transaction", b.t.p.cfg.Area)
	}
	b.t.writes++
	return nil
}

func (b *pgBucket) put(key, value []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	// Copies (never nil: a NULL value is not an empty one): bbolt lets a
	// caller reuse its slices once Put returns.
	b.t.keys.write(b.name, clone(key), clone(value))
	return nil
}

func (b *pgBucket) delete(key []byte) error {
	if err := b.writable(); err != nil {
		return err
	}
	b.t.keys.write(b.name, clone(key), nil)
	return nil
}

func (b *pgBucket) count() int {
	b.t.flushBucket(b.name)
	if b.t.err != nil {
		return 0
	}
	var n int
	if _, err := b.t.queryRow(b.t.p.sql.count, []any{b.name}, &n); err != nil {
		b.t.fail(err)
		return 0
	}
	return n
}

// ForEach reads the whole bucket before calling fn, so fn may run its own
// queries on the same connection.
func (b *pgBucket) forEach(fn func(k, v []byte) error) error {
	rows, err := b.rows(b.t.p.sql.all, b.name)
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

// rangeKey names a range read: its statement and arguments (a bucket, a
// limit and a key at most).
func rangeKey(sql string, args []any) string {
	k := sql
	for _, a := range args {
		switch a := a.(type) {
		case string:
			k += "\x00s" + a
		case int:
			k += "\x00i" + strconv.Itoa(a)
		case []byte:
			k += "\x00b" + string(a)
		default:
			panic(fmt.Sprintf("kv: range read argument of type %T", a))
		}
	}
	return k
}

func (b *pgBucket) rows(sql string, args ...any) ([]pair, error) {
	t := b.t
	// A range read is asked once per transaction while nothing is
	// written: the reads repeat (task_list sums the same counters'
	// shards for each range it merges), and the answer cannot change.
	rk := rangeKey(sql, args)
	if t.rangesAt != t.writes {
		t.ranges, t.rangesAt = nil, t.writes
	}
	if r, ok := t.ranges[rk]; ok {
		return r, nil
	}
	b.t.flushBucket(b.name)
	if b.t.err != nil {
		return nil, b.t.err
	}
	var out []pair
	defer func() {
		if t.err == nil {
			if t.ranges == nil {
				t.ranges = map[string][]pair{}
			}
			t.ranges[rk] = out
		}
	}()
	err := b.t.query(sql, args, func(rs pgx.Rows) error {
		var p pair
		if err := rs.Scan(&p.k, &p.v); err != nil {
			return err
		}
		if p.v == nil {
			p.v = []byte{}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, b.t.fail(err)
	}
	return out, nil
}

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
	s := &c.b.t.p.sql
	var sql string
	switch {
	case from == nil && fwd:
		sql = s.firstAsc
	case from == nil:
		sql = s.lastDesc
	case fwd && inclusive:
		sql = s.fromAsc
	case fwd:
		sql = s.afterAsc
	case inclusive:
		sql = s.fromDesc
	default:
		sql = s.beforeDesc
	}
	args := []any{c.b.name, cursorPage}
	if from != nil {
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

// Delete removes the current pair; the cursor keeps its position, so the
// next move refetches from it.
func (c *pgCursor) delete() error {
	if c.at == nil {
		return errors.New("kv: cursor delete with no current pair")
	}
	return c.b.delete(c.at)
}

// SQLConn runs an area's own statements inside a transaction.
type SQLConn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SQL is the connection of the PostgreSQL transaction under t, with the
// transaction begun and its pending writes sent, for an area's own tables
// beside its key-value table (the admin area's usage counters); conn is
// nil on bbolt. Statements run on it share the transaction's snapshot,
// lock and fate. err is the transaction's earlier failure, if any.
func (t Tx) SQL() (ctx context.Context, conn SQLConn, err error) {
	if t.pg == nil {
		return nil, nil, nil
	}
	if t.pg.peek {
		// Statements on the connection would each see their own snapshot.
		t.pg.peekAgain = true
		return t.pg.ctx, nil, t.pg.fail(errPeekAgain{})
	}
	t.pg.flush()
	if t.pg.begin != "" && t.pg.err == nil {
		t.pg.guard.waiting()
		_, err := t.pg.conn.Exec(t.pg.ctx, t.pg.begin)
		t.pg.guard.answered()
		if err != nil {
			t.pg.fail(err)
		}
		t.pg.begin = ""
	}
	// The caller's statements wait on ctx from here until the
	// transaction's next round trip of its own.
	t.pg.guard.waiting()
	return t.pg.ctx, t.pg.conn, t.pg.err
}
