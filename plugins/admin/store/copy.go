package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"path/filepath"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// CopyReport is what CopyToPostgres moved: every pair of admin.db, counted
// again on the target (the usage and delivery-queue buckets as rows of
// their tables).
type CopyReport struct {
	Area    string `json:"area"`
	Found   bool   `json:"found"`
	Buckets int    `json:"buckets"`
	Pairs   int    `json:"pairs"`
}

// CopyToPostgres moves dataDir's admin.db into the empty admin table of
// the database at dsn (`cairn store copy`). A data dir without admin.db has
// nothing to move; a database whose admin table holds anything is refused
// with an error naming "to".
func CopyToPostgres(ctx context.Context, dataDir, dsn string) (CopyReport, error) {
	rep := CopyReport{Area: MigrationArea}
	db, err := kv.OpenBoltSource(filepath.Join(dataDir, FileName))
	if err != nil || db == nil {
		return rep, err
	}
	defer db.Close()
	rep.Found = true
	where := pgmigrate.Redact(dsn)
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		return rep, errs.Invalidf("to", "reachable", "%v", err)
	}
	defer pool.Close()
	if _, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations); err != nil {
		return rep, errs.Newf(500, errs.InitFailed, "admin store at %s: %v", where, err)
	}
	// The usage and delivery-queue buckets go on into their own tables,
	// in the same transaction; every pair is counted once on the target,
	// wherever it landed.
	var moved int
	c, err := kv.CopyBoltThen(ctx, db, pool, pgConfig(where, 0), func(ctx context.Context, tx pgx.Tx) (err error) {
		moved, err = moveToTables(ctx, tx)
		return err
	})
	if err != nil {
		return rep, err
	}
	rep.Buckets, rep.Pairs = c.Buckets, c.Pairs
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		return rep, errs.Newf(503, errs.Unavailable, "count the copy in %s: %v", where, err)
	}
	if n+moved != c.Pairs {
		return rep, errs.Newf(500, errs.Internal, "the admin copy in %s holds %d pairs (%d of them usage counters and queued deliveries), the source %d; drop that database and copy again", where, n+moved, moved, c.Pairs)
	}
	return rep, nil
}
