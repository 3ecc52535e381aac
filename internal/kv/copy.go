package kv

// Moving a bbolt file into PostgreSQL (`cairn store copy`): every pair of
// every bucket, byte for byte, into an area's table, in one transaction.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Copied counts what CopyBolt moved.
type Copied struct {
	Buckets int `json:"buckets"`
	Pairs   int `json:"pairs"`
}

// OpenBoltSource opens the bbolt file at path read-only for a copy. It
// returns nil, nil when there is no such file (the area never ran there).
// A file a running cairn holds is refused at once, saying to stop it: a
// copy must see the store at rest.
func OpenBoltSource(path string) (*bolt.DB, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		e := errs.Newf(409, errs.Conflict, "%s is locked by a running cairn server or command; stop it, then run `cairn store copy` again", path)
		e.Details["field"] = "from"
		return nil, e
	}
	if err != nil {
		return nil, errs.Invalidf("from", "readable", "cannot read the store %s: %v", path, err)
	}
	return db, nil
}

// CopyBolt copies every pair of every bucket of src into cfg's table (made
// by TableSQL) in one transaction, holding the area's writers' lock
// exclusively. A table that already holds any row is refused: a copy goes
// into an empty database, never over data.
func CopyBolt(ctx context.Context, src *bolt.DB, pool *pgxpool.Pool, cfg PGConfig) (Copied, error) {
	return CopyBoltThen(ctx, src, pool, cfg, nil)
}

// CopyBoltThen is CopyBolt followed, in the same transaction, by then (when
// not nil): an area that keeps some buckets in tables of their own moves
// them there, so the copy lands whole or not at all.
func CopyBoltThen(ctx context.Context, src *bolt.DB, pool *pgxpool.Pool, cfg PGConfig, then func(ctx context.Context, tx pgx.Tx) error) (Copied, error) {
	var out Copied
	if err := cfg.check(); err != nil {
		return out, err
	}
	table, where := cfg.Table, cfg.Where
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, cfg.exclusiveSQL()); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+table+")").Scan(&used); err != nil {
			return err
		}
		if used {
			return errs.Invalidf("to", "empty", "%s already holds data in %s: `cairn store copy` moves a data dir into an empty database only", where, table)
		}
		if err := src.View(func(btx *bolt.Tx) error {
			rows := &boltRows{tx: btx, top: btx.Cursor()}
			n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, []string{"bucket", "key", "value"}, rows)
			if err != nil {
				return err
			}
			if rows.err != nil {
				return rows.err
			}
			out = Copied{Buckets: rows.buckets, Pairs: int(n)}
			return nil
		}); err != nil || then == nil {
			return err
		}
		return then(ctx, tx)
	})
	if _, ok := errs.As(err); err != nil && !ok {
		err = errs.Newf(503, errs.Unavailable, "copy into %s at %s: %v", table, where, err)
	}
	return out, err
}

// boltRows walks every bucket of a bbolt transaction in order, one pair a
// row, for CopyFrom.
type boltRows struct {
	tx      *bolt.Tx
	top     *bolt.Cursor // over bucket names
	name    string
	c       *bolt.Cursor // inside the current bucket; nil before the first
	k, v    []byte
	buckets int
	err     error
}

func (r *boltRows) Next() bool {
	for {
		if r.c != nil {
			r.k, r.v = r.c.Next()
		} else {
			r.k = nil
		}
		if r.k != nil {
			return r.pair()
		}
		var name []byte
		if r.buckets == 0 {
			name, _ = r.top.First()
		} else {
			name, _ = r.top.Next()
		}
		if name == nil {
			return false
		}
		r.buckets++
		r.name = string(name)
		r.c = r.tx.Bucket(name).Cursor()
		if r.k, r.v = r.c.First(); r.k != nil {
			return r.pair()
		}
	}
}

// pair accepts the pair under the cursor: a nested bucket (bbolt's nil
// value) cannot be moved, and an empty value is stored as empty, not NULL.
func (r *boltRows) pair() bool {
	if r.v == nil {
		if r.c.Bucket().Bucket(r.k) != nil {
			r.err = fmt.Errorf("bucket %s holds a nested bucket %q, which a copy cannot move", r.name, r.k)
			return false
		}
		r.v = []byte{}
	}
	return true
}

func (r *boltRows) Values() ([]any, error) { return []any{r.name, r.k, r.v}, nil }

func (r *boltRows) Err() error { return r.err }

// CopyInput is what each area's <area>_store_copy internal tool takes from
// `cairn store copy`: the data dir to read and the database to fill.
type CopyInput struct {
	From string `json:"from" jsonschema:"minLength=1,description=Absolute path of the data dir to copy from"`
	To   string `json:"to" jsonschema:"minLength=1,description=postgres:// URL of the empty database to copy into"`
}

// Check refuses a relative data dir or a target that is not a PostgreSQL
// URL.
func (in CopyInput) Check() error {
	if !filepath.IsAbs(in.From) {
		return errs.Invalidf("from", "absolute", "from must be an absolute data dir path, got %q", in.From)
	}
	if !strings.HasPrefix(in.To, "postgres://") && !strings.HasPrefix(in.To, "postgresql://") {
		return errs.Invalidf("to", "pattern", "to must be a postgres:// or postgresql:// URL")
	}
	return nil
}
