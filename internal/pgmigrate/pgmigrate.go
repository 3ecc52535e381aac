// Package pgmigrate applies an area's versioned PostgreSQL schema
// migrations. Each area (admin, sdd, ...) owns a numbered list of steps;
// the versions applied are recorded per area in cairn_migrations.
//
// Several cairn servers may start at once against one database: Apply
// takes a transaction-scoped advisory lock first, so exactly one of them
// runs the pending steps while the others wait and then find nothing to
// do. Every step of one Apply runs in that same transaction, so a failed
// step leaves the schema as it was.
package pgmigrate

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockKey is the advisory lock every migration of every area takes
// ("cairnmig" in ASCII); one lock keeps the bookkeeping table's creation
// serialized too.
const lockKey int64 = 0x636169726e6d6967

// Step is one migration: Version counts from 1 without gaps.
type Step struct {
	Version int
	Name    string
	SQL     string
}

// Status is what Apply or Read found.
type Status struct {
	Area string `json:"area"`
	// Version is the highest version applied.
	Version int `json:"version"`
	// Latest is the highest version this build knows.
	Latest int `json:"latest"`
	// Applied lists the versions this call applied.
	Applied []int `json:"applied,omitempty"`
	// Pending lists the versions not yet applied (Read only).
	Pending []int `json:"pending,omitempty"`
}

const bookkeeping = `CREATE TABLE IF NOT EXISTS cairn_migrations (
	area       text        NOT NULL,
	version    integer     NOT NULL,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (area, version)
)`

func latest(steps []Step) (int, error) {
	for i, s := range steps {
		if s.Version != i+1 {
			return 0, fmt.Errorf("migration %q has version %d, want %d (versions count from 1 without gaps)", s.Name, s.Version, i+1)
		}
	}
	return len(steps), nil
}

// Apply runs area's pending steps in order, under the advisory lock. A
// database whose recorded version is newer than this build's steps is an
// error: an older cairn must not write to a newer schema.
func Apply(ctx context.Context, pool *pgxpool.Pool, area string, steps []Step) (Status, error) {
	st := Status{Area: area}
	var err error
	if st.Latest, err = latest(steps); err != nil {
		return st, err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey); err != nil {
			return fmt.Errorf("take the migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, bookkeeping); err != nil {
			return fmt.Errorf("create cairn_migrations: %w", err)
		}
		if st.Version, err = current(ctx, tx, area); err != nil {
			return err
		}
		if st.Version > st.Latest {
			return fmt.Errorf("the %s schema is at version %d, newer than this cairn knows (%d): upgrade cairn", area, st.Version, st.Latest)
		}
		for _, s := range steps[st.Version:] {
			if _, err := tx.Exec(ctx, s.SQL); err != nil {
				return fmt.Errorf("%s migration %d (%s): %w", area, s.Version, s.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO cairn_migrations (area, version, name) VALUES ($1, $2, $3)", area, s.Version, s.Name); err != nil {
				return err
			}
			st.Applied = append(st.Applied, s.Version)
			st.Version = s.Version
		}
		return nil
	})
	return st, err
}

// Read reports area's applied and pending versions without changing
// anything.
func Read(ctx context.Context, pool *pgxpool.Pool, area string, steps []Step) (Status, error) {
	st := Status{Area: area}
	var err error
	if st.Latest, err = latest(steps); err != nil {
		return st, err
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('cairn_migrations') IS NOT NULL").Scan(&exists); err != nil {
		return st, err
	}
	if exists {
		if st.Version, err = current(ctx, pool, area); err != nil {
			return st, err
		}
	}
	for v := st.Version + 1; v <= st.Latest; v++ {
		st.Pending = append(st.Pending, v)
	}
	return st, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func current(ctx context.Context, q querier, area string) (int, error) {
	var v int
	if err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM cairn_migrations WHERE area = $1", area).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the %s schema version: %w", area, err)
	}
	return v, nil
}
