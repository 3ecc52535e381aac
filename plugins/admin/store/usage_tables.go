package store

// On PostgreSQL the rate-limit windows and daily counts of API keys live in
// tables of their own rather than in admin_kv, so one statement can check
// and count a request without the admin writer lock (the
// statement is in package accounts). Each window keeps its start and count
// and, per level of usage.threshold_exceeded, the count at which that
// level was announced in the window (0: not yet): with counts that grow
// by one per statement, the statement whose new count equals that mark is
// the one that announced it, which RETURNING shows without the old row.

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Usage tables on PostgreSQL.
const (
	UsageTable = "admin_usage"
	DailyTable = "admin_usage_daily"
)

var usageTablesSQL = `
CREATE TABLE admin_usage (
	key_id         text        PRIMARY KEY,
	total          bigint      NOT NULL DEFAULT 0,
	last_used_at   timestamptz,
	minute_start   timestamptz NOT NULL,
	minute_count   integer     NOT NULL DEFAULT 0,
	minute_warned  integer     NOT NULL DEFAULT 0,
	minute_limited integer     NOT NULL DEFAULT 0,
	hour_start     timestamptz NOT NULL,
	hour_count     integer     NOT NULL DEFAULT 0,
	hour_warned    integer     NOT NULL DEFAULT 0,
	hour_limited   integer     NOT NULL DEFAULT 0,
	day_start      timestamptz NOT NULL,
	day_count      integer     NOT NULL DEFAULT 0,
	day_warned     integer     NOT NULL DEFAULT 0,
	day_limited    integer     NOT NULL DEFAULT 0
);
CREATE TABLE admin_usage_daily (
	key_id   text   NOT NULL,
	day      date   NOT NULL,
	requests bigint NOT NULL,
	PRIMARY KEY (key_id, day)
);
` + moveUsageSQL

// window converts one window of a bbolt usage record (JSON r: start in
// unix ms, count, flags 1 = warned, 2 = limit announced).
func window(name string) string {
	return fmt.Sprintf(`to_timestamp(coalesce((r->>'%[1]s_start')::bigint, 0) / 1000.0),
		coalesce((r->>'%[1]s_count')::integer, 0),
		CASE WHEN coalesce((r->>'%[1]s_flags')::integer, 0) & 1 <> 0 THEN (r->>'%[1]s_count')::integer ELSE 0 END,
		CASE WHEN coalesce((r->>'%[1]s_flags')::integer, 0) & 2 <> 0 THEN (r->>'%[1]s_count')::integer ELSE 0 END`, name)
}

// moveUsageSQL moves the usage buckets of admin_kv (an admin store written
// before the usage tables, or just copied from bbolt) into the tables.
var moveUsageSQL = `
INSERT INTO admin_usage
SELECT convert_from(key, 'UTF8'), coalesce((r->>'total')::bigint, 0), nullif(r->>'last_used_at', '')::timestamptz,
	` + window("minute") + `,
	` + window("hour") + `,
	` + window("day") + `
FROM admin_kv, LATERAL (SELECT convert_from(value, 'UTF8')::jsonb AS r) rec
WHERE bucket = '` + BucketKeyUsage + `';
INSERT INTO admin_usage_daily
SELECT convert_from(substring(key FROM 1 FOR position('\x00'::bytea IN key) - 1), 'UTF8'),
	convert_from(substring(key FROM position('\x00'::bytea IN key) + 1), 'UTF8')::date,
	('x' || encode(value, 'hex'))::bit(64)::bigint
FROM admin_kv WHERE bucket = '` + BucketKeyDaily + `' AND length(value) = 8;
DELETE FROM admin_kv WHERE bucket IN ('` + BucketKeyUsage + `', '` + BucketKeyDaily + `');
`

// moveToTables moves the buckets that PostgreSQL keeps in tables of their
// own (usage counters, the delivery queue) out of admin_kv in tx, and
// reports the rows those tables then hold.
func moveToTables(ctx context.Context, tx pgx.Tx) (rows int, err error) {
	if _, err := tx.Exec(ctx, moveUsageSQL+moveQueueSQL); err != nil {
		return 0, fmt.Errorf("move the usage counters and the delivery queue into their tables: %w", err)
	}
	err = tx.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+UsageTable+") + (SELECT count(*) FROM "+DailyTable+") + (SELECT count(*) FROM "+QueueTable+")").Scan(&rows)
	return rows, err
}

// Postgres is the connection pool of a PostgreSQL store, for the admin
// area's own tables (UsageTable, DailyTable); nil on bbolt.
func (s *Store) Postgres() *pgxpool.Pool {
	if b, ok := s.b.(*pgBackend); ok {
		return b.Pool()
	}
	return nil
}
