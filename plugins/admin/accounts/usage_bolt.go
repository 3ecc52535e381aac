package accounts

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// boltUsage keeps the counters in the admin store's buckets: a check is
// one admin Update, so the check and the count are atomic across
// goroutines and the processes sharing the file.
type boltUsage struct{ a *Admin }

func (b boltUsage) check(apiKeyID string, c *store.Call) (RateLimitResult, error) {
	a := b.a
	var res RateLimitResult
	err := update(a.Keyed(c), &res, func(tx store.Tx) error {
		var sk storedKey
		found, err := store.Get(tx, store.BucketKeys, []byte(apiKeyID), &sk)
		if err != nil {
			return err
		}
		if !found {
			return errs.NotFoundf(errs.NotFound, "api_key_id", "API key %s does not exist", apiKeyID)
		}
		var u usageRecord
		if _, err := store.Get(tx, store.BucketKeyUsage, []byte(apiKeyID), &u); err != nil {
			return err
		}
		now := a.now()
		m, h, d := windowStarts(now)
		if u.MinuteStart != m.UnixMilli() {
			u.MinuteStart, u.MinuteCount, u.MinuteFlags = m.UnixMilli(), 0, 0
		}
		if u.HourStart != h.UnixMilli() {
			u.HourStart, u.HourCount, u.HourFlags = h.UnixMilli(), 0, 0
		}
		if u.DayStart != d.UnixMilli() {
			u.DayStart, u.DayCount, u.DayFlags = d.UnixMilli(), 0, 0
		}
		lim := sk.RateLimit
		resets := [3]time.Time{m.Add(time.Minute), h.Add(time.Hour), d.AddDate(0, 0, 1)}
		res.ResetAt = ResetAt{FormatTime(resets[0]), FormatTime(resets[1]), FormatTime(resets[2])}
		if res.refuse([3]int{u.MinuteCount, u.HourCount, u.DayCount}, lim, resets) {
			// A refused request still reports a limit not yet announced
			// (the limit was lowered after the window filled).
			changed, err := b.thresholds(tx, &sk.APIKey, &u, resets)
			if err != nil || !changed {
				return err
			}
			return store.Put(tx, store.BucketKeyUsage, []byte(apiKeyID), u)
		}
		u.MinuteCount++
		u.HourCount++
		u.DayCount++
		u.Total++
		u.LastUsedAt = FormatTime(now)
		res.Allowed = true
		res.Remaining = Remaining{lim.PerMinute - u.MinuteCount, lim.PerHour - u.HourCount, lim.PerDay - u.DayCount}
		if _, err := b.thresholds(tx, &sk.APIKey, &u, resets); err != nil {
			return err
		}
		if err := store.Put(tx, store.BucketKeyUsage, []byte(apiKeyID), u); err != nil {
			return err
		}
		return bumpDaily(tx, apiKeyID, d.Format("2006-01-02"))
	})
	return res, err
}

// thresholds emits usage.threshold_exceeded for every window of u whose
// count has reached the warning share or the limit and has not announced
// that level in this window yet, and marks it announced. It reports whether
// any flag changed.
func (b boltUsage) thresholds(tx store.Tx, k *APIKey, u *usageRecord, resets [3]time.Time) (bool, error) {
	changed := false
	for i, w := range []struct {
		name  string
		used  int
		limit int
		flags *uint8
	}{{"minute", u.MinuteCount, k.RateLimit.PerMinute, &u.MinuteFlags}, {"hour", u.HourCount, k.RateLimit.PerHour, &u.HourFlags}, {"day", u.DayCount, k.RateLimit.PerDay, &u.DayFlags}} {
		if w.limit <= 0 {
			continue
		}
		for _, lv := range b.a.levels() {
			if w.used < need(lv.share, w.limit) || *w.flags&lv.flag != 0 {
				continue
			}
			*w.flags |= lv.flag
			changed = true
			if err := b.a.announce(tx, k, w.name, lv.name, lv.share, w.used, w.limit, resets[i]); err != nil {
				return changed, err
			}
		}
	}
	return changed, nil
}

func bumpDaily(tx store.Tx, id, day string) error {
	b := tx.Bucket([]byte(store.BucketKeyDaily))
	k := store.Key([]byte(id), []byte(day))
	var n uint64
	if v := b.Get(k); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	return b.Put(k, store.U64(n+1))
}

func (boltUsage) read(tx store.Tx, id string) (usageRecord, error) {
	var u usageRecord
	_, err := store.Get(tx, store.BucketKeyUsage, []byte(id), &u)
	return u, err
}

func (boltUsage) daily(tx store.Tx, id, since, until string) ([]DailyUsage, error) {
	out := []DailyUsage{}
	prefix := store.Key([]byte(id), nil)
	c := tx.Bucket([]byte(store.BucketKeyDaily)).Cursor()
	for k, v := c.Seek(store.Key([]byte(id), []byte(since))); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		day := string(k[len(prefix):])
		if day > until {
			break
		}
		out = append(out, DailyUsage{Date: day, Requests: int64(binary.BigEndian.Uint64(v))})
	}
	return out, nil
}
