package kv

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Round trips: a transaction runs on one pooled connection and frames
// itself with plain BEGIN and COMMIT statements, so that each travels in
// the batch of its neighbour instead of a round trip of its own (pgx's Tx
// sends both alone). An update's writer lock is held from the round trip
// that takes it to the one that commits, so a trip saved there is time
// every other server's writers stop waiting (docs/decisions.md D40).

// sendBatch sends batch, after the pending begin; the first failure is
// the error, and tag is the last statement's command tag.
func (t *pgTx) sendBatch(batch *pgx.Batch) (tag pgconn.CommandTag, err error) {
	if t.begin != "" {
		full := &pgx.Batch{}
		full.Queue(t.begin)
		for _, q := range batch.QueuedQueries {
			full.Queue(q.SQL, q.Arguments...)
		}
		batch, t.begin = full, ""
	}
	t.guard.waiting()
	defer t.guard.answered()
	br := t.conn.SendBatch(t.ctx, batch)
	for range batch.Len() {
		if tag, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// query runs sql and calls each for every row, sending the pending begin
// in the same round trip.
func (t *pgTx) query(sql string, args []any, each func(rows pgx.Rows) error) error {
	if !t.peekRead() {
		return t.err
	}
	t.guard.waiting()
	defer t.guard.answered()
	if t.begin == "" {
		rows, err := t.conn.Query(t.ctx, sql, args...)
		if err != nil {
			return err
		}
		return scanAll(rows, each)
	}
	batch := &pgx.Batch{}
	batch.Queue(t.begin)
	batch.Queue(sql, args...)
	t.begin = ""
	br := t.conn.SendBatch(t.ctx, batch)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return err
	}
	rows, err := br.Query()
	if err == nil {
		err = scanAll(rows, each)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

func scanAll(rows pgx.Rows, each func(rows pgx.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryRow scans the first row of sql into dest; found is false when there
// is none.
func (t *pgTx) queryRow(sql string, args []any, dest ...any) (found bool, err error) {
	err = t.query(sql, args, func(rows pgx.Rows) error {
		if found {
			return nil
		}
		found = true
		return rows.Scan(dest...)
	})
	return found, err
}

// commit sends the pending writes and COMMIT in one round trip; a view
// that never read has nothing to end.
func (t *pgTx) commit() {
	batch := t.pending("")
	if t.begin != "" && batch.Len() == 0 {
		t.begin = ""
		return
	}
	batch.Queue("COMMIT")
	tag, err := t.sendBatch(batch)
	switch {
	case err != nil:
		t.fail(err)
	case tag.String() != "COMMIT":
		// PostgreSQL answers COMMIT of a failed transaction with ROLLBACK.
		t.fail(errRolledBack{tag.String()})
	}
}

type errRolledBack struct{ tag string }

func (e errRolledBack) Error() string {
	return "the database ended the transaction with " + e.tag + " instead of committing it"
}

// rollback ends a transaction that is not committing; a connection the
// rollback fails on stays inside it and is closed on release.
func (t *pgTx) rollback() {
	if t.begin != "" {
		return
	}
	t.guard.waiting()
	defer t.guard.answered()
	_, _ = t.conn.Exec(t.ctx, "ROLLBACK")
}
