package accounts

// On PostgreSQL a rate-limit check is one statement on the usage tables
// (store.UsageTable, store.DailyTable), with no cluster-wide lock: an
// INSERT … ON CONFLICT DO UPDATE whose WHERE lets the update happen only
// when every window has room, so the row lock PostgreSQL takes for the
// update is all that orders two servers counting the same key, and two
// keys never wait for each other. The daily count rides in the same
// statement (a writable CTE fed by the counted row), so a refusal counts
// nowhere. A window older than the request's is rolled over in the same
// statement; one newer (another server's clock is ahead) is counted in,
// never rolled back.
//
// usage.threshold_exceeded: each window keeps, per level, the count at
// which that level was announced (0: not yet). The statement sets the mark
// when its new count reaches the level, and since counts grow by one per
// statement, the statement that returns mark == count is the only one that
// announced it. The event itself goes through the admin store's outbox
// (a.event) in a short Update that runs only then. A server that dies
// between the two has counted the request and set the mark but recorded
// no event: that window's announcement of that level is lost (never
// duplicated); the counts stay exact.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

type pgUsage struct {
	a    *Admin
	pool *pgxpool.Pool
}

// markCols are the announcement marks of a window, in the order of
// Admin.levels.
var markCols = [2]string{"warned", "limited"}

// countSQL checks and counts one request. Parameters: $1 key id, $2 now,
// $3–$5 the minute, hour and day starts, $6 the day, $7–$9 the limits,
// $10–$12 the warning counts. It returns each window's count and marks
// when the request was counted, and no row when a window had no room.
var countSQL = func() string {
	var cols, vals, sets, room, ret []string
	for i, w := range windowNames {
		start := fmt.Sprintf("$%d::timestamptz", 3+i)
		need := [2]string{fmt.Sprintf("$%d::integer", 10+i), fmt.Sprintf("$%d::integer", 7+i)}
		// cur is the window's count before this request.
		cur := fmt.Sprintf("(CASE WHEN u.%[1]s_start >= %[2]s THEN u.%[1]s_count ELSE 0 END)", w, start)
		cols = append(cols, w+"_start", w+"_count")
		vals = append(vals, start, "1")
		sets = append(sets, fmt.Sprintf("%[1]s_start = GREATEST(u.%[1]s_start, %[2]s)", w, start), fmt.Sprintf("%s_count = %s + 1", w, cur))
		ret = append(ret, w+"_count")
		for l, col := range markCols {
			cols = append(cols, w+"_"+col)
			vals = append(vals, fmt.Sprintf("CASE WHEN 1 >= %s THEN 1 ELSE 0 END", need[l]))
			sets = append(sets, fmt.Sprintf("%[1]s_%[2]s = CASE WHEN u.%[1]s_start >= %[3]s AND u.%[1]s_%[2]s <> 0 THEN u.%[1]s_%[2]s WHEN %[4]s + 1 >= %[5]s THEN %[4]s + 1 ELSE 0 END",
				w, col, start, cur, need[l]))
			ret = append(ret, w+"_"+col)
		}
		room = append(room, cur+" < "+need[1])
	}
	return `WITH counted AS (
	INSERT INTO ` + store.UsageTable + ` AS u (key_id, total, last_used_at, ` + strings.Join(cols, ", ") + `)
	SELECT $1::text, 1, $2::timestamptz, ` + strings.Join(vals, ", ") + `
	WHERE $7::integer >= 1 AND $8::integer >= 1 AND $9::integer >= 1
	ON CONFLICT (key_id) DO UPDATE SET total = u.total + 1, last_used_at = GREATEST(u.last_used_at, $2::timestamptz),
		` + strings.Join(sets, ",\n\t\t") + `
	WHERE ` + strings.Join(room, " AND ") + `
	RETURNING ` + strings.Join(ret, ", ") + `
), daily AS (
	INSERT INTO ` + store.DailyTable + ` AS d (key_id, day, requests)
	SELECT $1::text, $6::date, 1 FROM counted
	ON CONFLICT (key_id, day) DO UPDATE SET requests = d.requests + 1
)
SELECT ` + strings.Join(ret, ", ") + ` FROM counted`
}()

// windowsSQL reads a key's windows, in countSQL's order with each start
// first.
var windowsSQL = func() string {
	var cols []string
	for _, w := range windowNames {
		cols = append(cols, w+"_start", w+"_count", w+"_warned", w+"_limited")
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + store.UsageTable + " WHERE key_id = $1"
}()

// windowRow is one window as the usage table holds it.
type windowRow struct {
	start time.Time
	count int
	marks [2]int
}

// announcement is a level a statement announced.
type announcement struct {
	window, used int
	lv           level
}

func unavailable(err error) error {
	if _, ok := errs.As(err); ok {
		return err
	}
	return errs.Newf(503, errs.Unavailable, "admin usage counters: %v", err)
}

// querier runs one statement: the pool, or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (p *pgUsage) check(id string, c *store.Call) (RateLimitResult, error) {
	if !c.Keyed() {
		var sk storedKey
		found, err := p.a.st.GetOne(store.BucketKeys, []byte(id), &sk)
		if err != nil {
			return RateLimitResult{}, err
		}
		if !found {
			return RateLimitResult{}, errs.NotFoundf(errs.NotFound, "api_key_id", "API key %s does not exist", id)
		}
		ctx, cancel := context.WithTimeout(context.Background(), kv.TxTimeout)
		defer cancel()
		return p.count(ctx, p.pool, sk.APIKey, p.a.st.Update)
	}
	// A keyed check counts inside an admin Update, so the count and the
	// record of its outcome commit together (docs/decisions.md D32); it
	// takes the writer lock the unkeyed hot path avoids.
	var res RateLimitResult
	err := p.a.st.Update(func(tx store.Tx) error {
		var err error
		res, err = store.Once(tx, c, p.a.now(), func() (RateLimitResult, error) {
			var sk storedKey
			found, err := store.Get(tx, store.BucketKeys, []byte(id), &sk)
			if err != nil {
				return RateLimitResult{}, err
			}
			if !found {
				return RateLimitResult{}, errs.NotFoundf(errs.NotFound, "api_key_id", "API key %s does not exist", id)
			}
			ctx, sqlTx, err := tx.SQL()
			if err != nil {
				return RateLimitResult{}, err
			}
			return p.count(ctx, sqlTx, sk.APIKey, func(fn func(tx store.Tx) error) error { return fn(tx) })
		})
		return err
	})
	return res, err
}

// count checks and counts one request of k with q, announcing the levels
// it reaches in a transaction of update.
func (p *pgUsage) count(ctx context.Context, q querier, k APIKey, update func(func(tx store.Tx) error) error) (RateLimitResult, error) {
	a := p.a
	id := k.ID
	var res RateLimitResult
	now := a.now()
	m, h, d := windowStarts(now)
	starts := [3]time.Time{m, h, d}
	resets := [3]time.Time{m.Add(time.Minute), h.Add(time.Hour), d.AddDate(0, 0, 1)}
	limits := [3]int{k.RateLimit.PerMinute, k.RateLimit.PerHour, k.RateLimit.PerDay}
	res.ResetAt = ResetAt{FormatTime(resets[0]), FormatTime(resets[1]), FormatTime(resets[2])}
	var due []announcement
	// A refusal whose re-read finds room (the window rolled over between
	// the two, or another server's clock is ahead) counts again.
	for try := 0; ; try++ {
		var got [3]windowRow
		err := q.QueryRow(ctx, countSQL, id, now, m, h, d, d, limits[0], limits[1], limits[2],
			need(a.threshold, limits[0]), need(a.threshold, limits[1]), need(a.threshold, limits[2])).Scan(
			&got[0].count, &got[0].marks[0], &got[0].marks[1],
			&got[1].count, &got[1].marks[0], &got[1].marks[1],
			&got[2].count, &got[2].marks[0], &got[2].marks[1])
		if err == nil {
			res.Allowed = true
			res.Remaining = Remaining{limits[0] - got[0].count, limits[1] - got[1].count, limits[2] - got[2].count}
			for i, w := range got {
				for l, lv := range a.levels() {
					if w.marks[l] == w.count {
						due = append(due, announcement{window: i, used: w.count, lv: lv})
					}
				}
			}
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return res, unavailable(err)
		}
		refused, err := p.refusal(ctx, q, id, starts, limits, resets, &res, &due)
		if err != nil || refused {
			if err != nil {
				return res, err
			}
			break
		}
		if try == 2 {
			return res, errs.Newf(503, errs.Unavailable, "the rate-limit windows of API key %s kept changing under the check; retry", id).With("retryable", true)
		}
	}
	if len(due) == 0 {
		return res, nil
	}
	return res, update(func(tx store.Tx) error {
		for _, an := range due {
			if err := a.announce(tx, &k, windowNames[an.window], an.lv.name, an.lv.share, an.used, limits[an.window], resets[an.window]); err != nil {
				return err
			}
		}
		return nil
	})
}

// refusal reads the key's windows once more after countSQL refused, fills
// res with what is left and when to retry, and marks (each by one
// conditional update, so one server wins) the levels a refusal reaches
// that were never announced in the window: a limit lowered after the
// window filled.
func (p *pgUsage) refusal(ctx context.Context, q querier, id string, starts [3]time.Time, limits [3]int, resets [3]time.Time, res *RateLimitResult, due *[]announcement) (refused bool, err error) {
	var rows [3]windowRow
	var used [3]int
	err = q.QueryRow(ctx, windowsSQL, id).Scan(
		&rows[0].start, &rows[0].count, &rows[0].marks[0], &rows[0].marks[1],
		&rows[1].start, &rows[1].count, &rows[1].marks[0], &rows[1].marks[1],
		&rows[2].start, &rows[2].count, &rows[2].marks[0], &rows[2].marks[1])
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, unavailable(err)
	}
	for i, r := range rows {
		if !r.start.Before(starts[i]) {
			used[i] = r.count
		} else {
			rows[i].marks = [2]int{}
		}
	}
	if !res.refuse(used, RateLimit{limits[0], limits[1], limits[2]}, resets) {
		return false, nil
	}
	for i, w := range windowNames {
		if limits[i] <= 0 {
			continue
		}
		for l, lv := range p.a.levels() {
			if used[i] < need(lv.share, limits[i]) || rows[i].marks[l] != 0 {
				continue
			}
			var n int
			err := q.QueryRow(ctx, fmt.Sprintf("UPDATE %[1]s SET %[2]s_%[3]s = %[2]s_count WHERE key_id = $1 AND %[2]s_start >= $2 AND %[2]s_%[3]s = 0 AND %[2]s_count >= $3 RETURNING %[2]s_count",
				store.UsageTable, w, markCols[l]), id, starts[i], need(lv.share, limits[i])).Scan(&n)
			switch {
			case errors.Is(err, pgx.ErrNoRows): // another server announced it
			case err != nil:
				return true, unavailable(err)
			default:
				*due = append(*due, announcement{window: i, used: n, lv: lv})
			}
		}
	}
	return true, nil
}

func (p *pgUsage) read(tx store.Tx, id string) (usageRecord, error) {
	var u usageRecord
	ctx, sqlTx, err := tx.SQL()
	if err != nil {
		return u, err
	}
	var last *time.Time
	var m, h, d time.Time
	err = sqlTx.QueryRow(ctx, "SELECT total, last_used_at, minute_start, minute_count, hour_start, hour_count, day_start, day_count FROM "+store.UsageTable+" WHERE key_id = $1", id).
		Scan(&u.Total, &last, &m, &u.MinuteCount, &h, &u.HourCount, &d, &u.DayCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return usageRecord{}, nil
	}
	if err != nil {
		return u, unavailable(err)
	}
	u.MinuteStart, u.HourStart, u.DayStart = m.UnixMilli(), h.UnixMilli(), d.UnixMilli()
	if last != nil {
		u.LastUsedAt = FormatTime(*last)
	}
	return u, nil
}

func (p *pgUsage) daily(tx store.Tx, id, since, until string) ([]DailyUsage, error) {
	out := []DailyUsage{}
	ctx, sqlTx, err := tx.SQL()
	if err != nil {
		return nil, err
	}
	rows, err := sqlTx.Query(ctx, "SELECT to_char(day, 'YYYY-MM-DD'), requests FROM "+store.DailyTable+" WHERE key_id = $1 AND day BETWEEN $2::date AND $3::date ORDER BY day", id, since, until)
	if err != nil {
		return nil, unavailable(err)
	}
	defer rows.Close()
	for rows.Next() {
		var du DailyUsage
		if err := rows.Scan(&du.Date, &du.Requests); err != nil {
			return nil, unavailable(err)
		}
		out = append(out, du)
	}
	if err := rows.Err(); err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}
