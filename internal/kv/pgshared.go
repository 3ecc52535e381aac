package kv

// Shared updates (docs/decisions.md D40). An area's updates take its
// writers' lock so that the rows every write reads and advances (counters,
// sequences, chain heads) stay linear across servers; but most writes touch
// only rows of their own, and taking the lock exclusively made servers
// wait for each other instead of for the database. A shared update takes
// the writers' table in ROW SHARE mode, which other shared updates do not
// conflict with and an exclusive update (EXCLUSIVE mode) does, and runs at
// REPEATABLE READ: PostgreSQL then fails the later of two transactions that
// change the same row (SQLSTATE 40001), and the update runs again, so no
// change is ever lost to a concurrent one. The lock is a table lock rather
// than an advisory one because LOCK TABLE takes no snapshot: the
// transaction's snapshot is taken by its first read, after the lock is
// held, so it sees every exclusive update that went before.
//
// A shared update must leave the rows every writer shares alone, or it
// would conflict with every other server's writes:
//   - counters are drawn outside the transaction (Tx.IncrementEach), as a
//     PostgreSQL sequence is: never handed out twice, and a number drawn by
//     a transaction that fails is skipped;
//   - totals are kept per server (Tx.Shard) and summed by readers;
//   - anything rare that must see every write (the turn of a generation)
//     asks to run alone (Tx.Alone), and the update runs again as an
//     exclusive one.
//
// One conflict PostgreSQL does not report: a row deleted by one transaction
// and written again by another that read it before the delete is simply
// inserted afresh (writes are upserts). So a shared update deletes only
// rows no other shared update writes from an earlier read: entries it
// moves, which every mover deletes (two deletes do conflict), or its own.
// Folding every server's shards is an exclusive update.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

type txMode int

const (
	modeView txMode = iota
	modeAlone
	modeShared
)

// sharedAttempts bounds how often a shared update runs before it runs
// alone: under a storm of conflicts, waiting beats retrying.
const sharedAttempts = 4

// WritersSQL creates the table whose lock orders an area's updates
// (PGConfig.Writers). It holds no rows.
func WritersSQL(table string) string {
	return "CREATE TABLE " + table + " (unused boolean)"
}

// UpdateShared runs fn in one transaction beside the area's other shared
// updates, on every server, and alone among its exclusive ones; fn may run
// more than once (a conflict, or Tx.Alone), and only its last run counts.
// Without PGConfig.Writers it is Update.
func (p *PG) UpdateShared(fn func(tx Tx) error) error {
	if p.cfg.Writers == "" {
		return p.Update(fn)
	}
	return p.run(modeShared, fn)
}

// SharedStats counts how shared updates ended since the PG was made.
type SharedStats struct {
	// Committed is the shared updates that committed as shared.
	Committed uint64 `json:"committed"`
	// Conflicts is the attempts PostgreSQL failed for a concurrent
	// transaction's sake (each ran again).
	Conflicts uint64 `json:"conflicts"`
	// Alone is the attempts that asked to run alone (each ran again
	// exclusively).
	Alone uint64 `json:"alone"`
}

type sharedCounters struct{ shared, conflicts, alone atomic.Uint64 }

// Stats says how the shared updates went.
func (p *PG) Stats() SharedStats {
	return SharedStats{Committed: p.stats.shared.Load(), Conflicts: p.stats.conflicts.Load(), Alone: p.stats.alone.Load()}
}

// lock begins an update and takes the writers' lock in the round trip that
// begins it.
func (t *pgTx) lock(mode txMode) error {
	p := t.p
	batch := &pgx.Batch{}
	t.begin = beginUpdate
	if p.cfg.Writers == "" {
		// In milliseconds: PostgreSQL reads no Go duration past a minute
		// ("1m0s").
		batch.Queue(takeLock, strconv.FormatInt(p.cfg.LockTimeout.Milliseconds(), 10), p.cfg.Lock)
	} else {
		lockSQL := p.cfg.exclusiveSQL()
		if mode == modeShared {
			t.begin, t.shared = beginShared, true
			lockSQL = "LOCK TABLE " + p.cfg.Writers + " IN ROW SHARE MODE"
		}
		// SET LOCAL and LOCK are utility statements: neither takes the
		// snapshot, which must come after the lock.
		batch.Queue(fmt.Sprintf("SET LOCAL lock_timeout = %d", p.cfg.LockTimeout.Milliseconds()))
		batch.Queue(lockSQL)
	}
	if _, err := t.sendBatch(batch); err != nil {
		t.rollback()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" {
			return errs.Newf(503, errs.Unavailable, "the %s store %s stayed locked by another server for %s; retry, or look for a stuck cairn server", p.cfg.Area, p.cfg.Where, p.cfg.LockTimeout)
		}
		return p.unavailable(t.guard.explain(err))
	}
	return nil
}

const beginShared = "BEGIN ISOLATION LEVEL REPEATABLE READ"

// conflicted reports whether err is PostgreSQL failing a transaction for
// the sake of a concurrent one: a serialization failure or a deadlock.
func conflicted(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// errAlone ends a shared update's attempt that asked to run alone.
type errAlone struct{}

func (errAlone) Error() string { return "the update runs again alone among the writers" }

// Alone makes sure the rest of the transaction runs alone among the area's
// writers: inside a shared update it fails the attempt (every later
// operation fails too) and the update runs again as an exclusive one;
// anywhere else it returns nil. Call it before writing what a concurrent
// writer could also be deciding to write: a generation's turn, a record
// every writer reads.
func (t Tx) Alone() error {
	if t.pg == nil || !t.pg.shared {
		return nil
	}
	t.pg.alone = true
	return t.pg.fail(errAlone{})
}

// Concurrent reports whether the transaction is a shared update, which
// other servers' shared updates run beside.
func (t Tx) Concurrent() bool { return t.pg != nil && t.pg.shared }

// Shard is this server's key for totals on PostgreSQL (nil on bbolt): a
// total every write would change (task_list's counts) changes under the
// writer's own shard inside a shared update, so servers do not conflict on
// it, and readers add the shards to the total. Shards are folded back by
// exclusive updates.
func (t Tx) Shard() []byte {
	if t.pg == nil {
		return nil
	}
	return t.pg.p.shard[:]
}

// IncrementEach raises each counter under its key (8 bytes, big endian;
// absent reads as 0) by one and returns them. Inside a shared update the
// counters are drawn outside the transaction, in one round trip, as a
// PostgreSQL sequence is: a number is never handed out twice, but one
// drawn by a transaction that then fails is skipped (see DrawAhead for
// one that runs again). Everywhere else they change inside the
// transaction.
func (t Tx) IncrementEach(keys ...Key) ([]uint64, error) {
	if t.pg != nil && t.pg.shared {
		return t.pg.drawKeys(keys)
	}
	out := make([]uint64, len(keys))
	for i, k := range keys {
		n, err := incrementEach(t.Bucket(k.Bucket), []Key{k})
		if err != nil {
			return nil, err
		}
		out[i] = n[0]
	}
	return out, nil
}

// DrawAhead draws, inside a shared update, the next number of each counter
// now, in one round trip, for the transaction's next IncrementEach of that
// counter to take without one of its own: a write that will draw several
// counters at different points draws them together. A number drawn ahead
// and not taken is skipped, unless its Key keeps it: the numbers of kept
// counters an attempt drew, taken or not, are the first the next attempt
// takes when the update runs again (they were never committed), so task
// numbers and thought ids have no gap for a rerun. A counter whose numbers
// must follow the snapshot they are drawn in (record numbers, which order
// a chain's links) is not kept. Anywhere else DrawAhead does nothing.
func (t Tx) DrawAhead(keys ...Key) error {
	if t.pg == nil || !t.pg.shared {
		return nil
	}
	n, err := t.pg.draw(keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		t.pg.stash(k, n[i])
	}
	return nil
}

// stash keeps n for key's next IncrementEach in this attempt.
func (t *pgTx) stash(k Key, n uint64) {
	if t.ahead == nil {
		t.ahead = map[cacheKey][]uint64{}
	}
	ck := cacheKey{string(k.Bucket), string(k.Key)}
	t.ahead[ck] = append(t.ahead[ck], n)
	if k.Keep {
		if t.kept == nil {
			t.kept = map[cacheKey]bool{}
		}
		t.kept[ck] = true
	}
}

// take hands out key's next number drawn ahead, if any.
func (t *pgTx) take(k Key) (uint64, bool) {
	ck := cacheKey{string(k.Bucket), string(k.Key)}
	q := t.ahead[ck]
	if len(q) == 0 {
		return 0, false
	}
	t.ahead[ck] = q[1:]
	if k.Keep || t.kept[ck] {
		t.handed = append(t.handed, handedOut{ck, q[0]})
	}
	return q[0], true
}

// handedOut is a kept counter's number handed out in this attempt.
type handedOut struct {
	key cacheKey
	n   uint64
}

// carry is what the next attempt of this update takes first: every kept
// number this attempt handed out or held, in order.
func (t *pgTx) carry() map[cacheKey][]uint64 {
	var out map[cacheKey][]uint64
	add := func(ck cacheKey, n ...uint64) {
		if out == nil {
			out = map[cacheKey][]uint64{}
		}
		out[ck] = append(out[ck], n...)
	}
	for _, h := range t.handed {
		add(h.key, h.n)
	}
	for ck := range t.kept {
		if q := t.ahead[ck]; len(q) > 0 {
			add(ck, q...)
		}
	}
	return out
}

// drawKeys takes each counter's number drawn ahead, if any, and draws the
// others (stashed first, so kept ones are carried if the update reruns).
func (t *pgTx) drawKeys(keys []Key) ([]uint64, error) {
	out := make([]uint64, len(keys))
	var missing []Key
	var at []int
	for i, k := range keys {
		if n, ok := t.take(k); ok {
			out[i] = n
			continue
		}
		missing, at = append(missing, k), append(at, i)
	}
	if len(missing) > 0 {
		n, err := t.draw(missing)
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			t.stash(missing[j], n[j])
			out[i], _ = t.take(missing[j])
		}
	}
	return out, nil
}

func incrementEach(b Bucket, keys []Key) ([]uint64, error) {
	if b.pg != nil && b.pg.t.shared {
		return b.pg.t.drawKeys(keys)
	}
	if b.pg != nil {
		// An exclusive rerun of a shared update takes the numbers its
		// earlier attempt drew first: the counter is already past them.
		if n, ok := b.pg.t.take(keys[0]); ok {
			return []uint64{n}, nil
		}
	}
	key := keys[0].Key
	var n uint64
	if raw := b.Get(key); raw != nil {
		if len(raw) != 8 {
			return nil, fmt.Errorf("kv: counter %q is %d bytes, not 8", key, len(raw))
		}
		n = binary.BigEndian.Uint64(raw)
	}
	n++
	return []uint64{n}, b.Put(key, binary.BigEndian.AppendUint64(nil, n))
}

// draw raises counters in a transaction of their own on the draws pool.
// Its commit is not waited for (synchronous_commit off): the write that
// uses the numbers commits after it, and PostgreSQL's log is flushed in
// order, so a number a committed write holds is durable, and one lost in
// a crash was held by no committed write.
func (t *pgTx) draw(keys []Key) ([]uint64, error) {
	if t.err != nil {
		return nil, t.err
	}
	pool, err := t.p.drawPool()
	if err != nil {
		return nil, t.fail(err)
	}
	buckets, ks := make([]string, len(keys)), make([][]byte, len(keys))
	for i, k := range keys {
		buckets[i], ks[i] = string(k.Bucket), clone(k.Key)
	}
	batch := &pgx.Batch{}
	batch.Queue("BEGIN")
	batch.Queue("SET LOCAL synchronous_commit = off")
	batch.Queue(t.p.sql.draw, buckets, ks)
	batch.Queue("COMMIT")
	t.guard.waiting()
	defer t.guard.answered()
	br := pool.SendBatch(t.ctx, batch)
	got := map[cacheKey]uint64{}
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			err = scanAll(rows, func(rows pgx.Rows) error {
				var b string
				var k, v []byte
				if err := rows.Scan(&b, &k, &v); err != nil {
					return err
				}
				if len(v) != 8 {
					return fmt.Errorf("counter %q is %d bytes, not 8", k, len(v))
				}
				got[cacheKey{b, string(k)}] = binary.BigEndian.Uint64(v)
				return nil
			})
		}
	}
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	out := make([]uint64, len(keys))
	for i := range keys {
		n, ok := got[cacheKey{buckets[i], string(ks[i])}]
		if !ok && err == nil {
			err = fmt.Errorf("counter %q was not drawn", ks[i])
		}
		out[i] = n
	}
	if err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// drawPool opens the pool counters are drawn on: a connection of its own
// per draw, so a shared update never waits for one of its area's pool,
// whose connections may all be held by updates waiting for the lock it
// holds.
func (p *PG) drawPool() (*pgxpool.Pool, error) {
	p.drawsOnce.Do(func() {
		cfg := p.pool.Config().Copy()
		cfg.MaxConns, cfg.MinConns = 2, 0
		p.draws, p.drawsErr = pgxpool.NewWithConfig(context.Background(), cfg)
	})
	if p.draws == nil && p.drawsErr == nil {
		return nil, errors.New("the store is closed")
	}
	return p.draws, p.drawsErr
}
