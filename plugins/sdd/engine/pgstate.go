package engine

// The state document on PostgreSQL (CAIRN_STORE=postgres://…, docs/decisions.md
// D26): one row of sdd_state holds the same JSON the file would. Every
// write locks that row (SELECT … FOR UPDATE) before it reads the document,
// so writes of every server run one at a time on the latest document —
// the same atomic replace the file gives one process — and lease ids,
// counters and idempotency records never fork. Reads take no lock.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
)

// MigrationArea names the sdd area's migrations in cairn_migrations.
const MigrationArea = "sdd"

// Migrations are the sdd area's PostgreSQL schema versions. Append new
// steps; never edit an applied one. The row exists from the start (an
// empty doc means "no state yet"), so the first write locks it like any
// other.
var Migrations = []pgmigrate.Step{
	{Version: 1, Name: "state document", SQL: `CREATE TABLE sdd_state (
		id         smallint    PRIMARY KEY CHECK (id = 1),
		doc        bytea       NOT NULL,
		updated_at timestamptz NOT NULL DEFAULT now()
	);
	INSERT INTO sdd_state (id, doc) VALUES (1, '')`},
}

// stateTimeout bounds one read or write of the document, the wait for the
// row lock included.
const stateTimeout = 30 * time.Second

type pgState struct {
	pool    *pgxpool.Pool
	where   string
	version int
}

func openPGState(dsn string) (*pgState, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return nil, err
	}
	st, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &pgState{pool: pool, where: pgmigrate.Redact(dsn), version: st.Version}, nil
}

// load returns the stored document, nil when none was written yet.
func (p *pgState) load() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	var doc []byte
	if err := p.pool.QueryRow(ctx, "SELECT doc FROM sdd_state WHERE id = 1").Scan(&doc); err != nil {
		return nil, p.failed(err)
	}
	if len(doc) == 0 {
		return nil, nil
	}
	return doc, nil
}

// loadIfChanged returns the stored document and its row version (xmin,
// new with every update), or only the version when it is still tag: a
// poll of a document nobody changed reads a few bytes.
func (p *pgState) loadIfChanged(tag string) (doc []byte, version string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	err = p.pool.QueryRow(ctx, "SELECT xmin::text, CASE WHEN xmin::text = $1 THEN NULL ELSE doc END FROM sdd_state WHERE id = 1", tag).Scan(&version, &doc)
	if err != nil {
		return nil, "", p.failed(err)
	}
	return doc, version, nil
}

// replace runs fn on the current document while holding its row, and
// stores what fn returns; fn returning nil, or an error, leaves it as it
// was.
func (p *pgState) replace(fn func(cur []byte) ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	var fnErr error
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var doc []byte
		if err := tx.QueryRow(ctx, "SELECT doc FROM sdd_state WHERE id = 1 FOR UPDATE").Scan(&doc); err != nil {
			return err
		}
		if len(doc) == 0 {
			doc = nil
		}
		next, err := fn(doc)
		if err != nil {
			fnErr = err
			return err
		}
		if next == nil {
			return nil
		}
		_, err = tx.Exec(ctx, "UPDATE sdd_state SET doc = $1, updated_at = now() WHERE id = 1", next)
		return err
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return p.failed(err)
	}
	return nil
}

func (p *pgState) failed(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("the SDD state row is missing from %s (was sdd_state emptied by hand?)", p.where)
	}
	return fmt.Errorf("SDD state in %s: %w", p.where, err)
}

func (p *pgState) close() { p.pool.Close() }
