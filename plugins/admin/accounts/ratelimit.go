package accounts

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// usageRecord is a key's counters: totals and the three fixed windows,
// each aligned to the UTC clock (the minute, the hour, the day).
type usageRecord struct {
	Total       int64  `json:"total"`
	LastUsedAt  string `json:"last_used_at,omitempty"`
	MinuteStart int64  `json:"minute_start"`
	MinuteCount int    `json:"minute_count"`
	HourStart   int64  `json:"hour_start"`
	HourCount   int    `json:"hour_count"`
	DayStart    int64  `json:"day_start"`
	DayCount    int    `json:"day_count"`
	// Flags remember, per window, which usage.threshold_exceeded events
	// the current window has already had (flagWarned, flagLimit), so each
	// is emitted once per window.
	MinuteFlags uint8 `json:"minute_flags,omitempty"`
	HourFlags   uint8 `json:"hour_flags,omitempty"`
	DayFlags    uint8 `json:"day_flags,omitempty"`
}

const (
	flagWarned uint8 = 1 << iota
	flagLimit
)

// EventUsageThreshold is emitted when a key's use of a rate-limit window
// crosses the configured share (Options.UsageThreshold) and again when it
// reaches the limit: at most once per window and level.
const EventUsageThreshold = "usage.threshold_exceeded"

// DefaultUsageThreshold is the share of a window that triggers the warning
// level of usage.threshold_exceeded.
const DefaultUsageThreshold = 0.8

// ParseUsageThreshold reads a threshold setting: a share ("0.8") or a
// percentage ("80" or "80%"), in (0, 1] once converted.
func ParseUsageThreshold(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(t, 64)
	if err == nil && (pct || v > 1) {
		v /= 100
	}
	if err != nil || math.IsNaN(v) || v <= 0 || v > 1 {
		return 0, errs.Invalidf("usage_threshold", "range", "usage_threshold must be a share in (0, 1] or a percentage in (0, 100] such as 80%% (got %q)", s)
	}
	return v, nil
}

// Remaining is the allowance left in each window.
type Remaining struct {
	PerMinute int `json:"perMinute"`
	PerHour   int `json:"perHour"`
	PerDay    int `json:"perDay"`
}

// ResetAt is when each window starts afresh.
type ResetAt struct {
	PerMinute string `json:"perMinute"`
	PerHour   string `json:"perHour"`
	PerDay    string `json:"perDay"`
}

// RateLimitResult is checkRateLimit's result.
type RateLimitResult struct {
	Allowed   bool      `json:"allowed"`
	Remaining Remaining `json:"remaining"`
	ResetAt   ResetAt   `json:"resetAt"`
	// LimitedBy names the exhausted windows ("minute", "hour", "day") when
	// the request was refused.
	LimitedBy []string `json:"limitedBy,omitempty"`
	// RetryAt is when every exhausted window has reset.
	RetryAt string `json:"retryAt,omitempty"`
}

func windowStarts(now time.Time) (minute, hour, day time.Time) {
	now = now.UTC()
	return now.Truncate(time.Minute), now.Truncate(time.Hour), time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// CheckRateLimit checks the key's three windows and, only when all three
// have room, counts the request in all of them, atomically across
// goroutines, processes and servers, so a refused request counts nowhere.
// Each window's usage.threshold_exceeded levels are announced once. Unknown
// keys are a 404.
func (a *Admin) CheckRateLimit(apiKeyID string) (RateLimitResult, error) {
	res, err := a.usage.check(apiKeyID, a.call)
	return res, internal(err)
}

// windowNames name the three windows in their order everywhere.
var windowNames = [3]string{"minute", "hour", "day"}

// refuse fills res for a request that finds used already counted in the
// three windows: when any has no room left it names the exhausted windows,
// the remaining allowance and when to retry, and reports true.
func (res *RateLimitResult) refuse(used [3]int, lim RateLimit, resets [3]time.Time) bool {
	limits := [3]int{lim.PerMinute, lim.PerHour, lim.PerDay}
	var retry time.Time
	for i, name := range windowNames {
		if used[i]+1 > limits[i] {
			res.LimitedBy = append(res.LimitedBy, name)
			if resets[i].After(retry) {
				retry = resets[i]
			}
		}
	}
	if len(res.LimitedBy) == 0 {
		return false
	}
	res.Remaining = Remaining{max(limits[0]-used[0], 0), max(limits[1]-used[1], 0), max(limits[2]-used[2], 0)}
	res.RetryAt = FormatTime(retry)
	return true
}

// need is the count at which share of limit is reached.
func need(share float64, limit int) int {
	return int(math.Ceil(share*float64(limit) - 1e-9)) // 0.7×10 is 7.000000000000001 in floating point
}

// level is one level of usage.threshold_exceeded.
type level struct {
	flag  uint8 // its bit in a bbolt usage record's window flags
	name  string
	share float64
}

// levels are the warning at the configured share, then the limit itself.
func (a *Admin) levels() [2]level {
	return [2]level{{flagWarned, "warning", a.threshold}, {flagLimit, "limit", 1}}
}

// announce records one usage.threshold_exceeded event.
func (a *Admin) announce(tx store.Tx, k *APIKey, window, level string, share float64, used, limit int, reset time.Time) error {
	return a.event(tx, EventUsageThreshold, map[string]any{
		"key_id": k.ID, "user_id": k.UserID, "workspace_id": k.WorkspaceID, "window": window, "level": level,
		"threshold": share, "used": used, "limit": limit, "reset_at": FormatTime(reset),
	})
}

// DailyUsage is one day's request count.
type DailyUsage struct {
	Date     string `json:"date"`
	Requests int64  `json:"requests"`
}

// WindowUsage is the count in the current window and when it resets.
type WindowUsage struct {
	Used    int    `json:"used"`
	Limit   int    `json:"limit"`
	ResetAt string `json:"reset_at"`
}

// UsageReport is getApiKeyUsage's result.
type UsageReport struct {
	KeyID         string       `json:"key_id"`
	TotalRequests int64        `json:"total_requests"`
	LastUsedAt    *string      `json:"last_used_at" jsonschema:"oneof_type=string;null"`
	Minute        WindowUsage  `json:"minute"`
	Hour          WindowUsage  `json:"hour"`
	Day           WindowUsage  `json:"day"`
	Daily         []DailyUsage `json:"daily"`
}

// UsageOptions bound getApiKeyUsage's daily records (YYYY-MM-DD,
// inclusive; default the last 30 days).
type UsageOptions struct {
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
}

// GetAPIKeyUsage reports a key's counters and its per-day request counts;
// nil for an unknown key.
func (a *Admin) GetAPIKeyUsage(id string, o UsageOptions) (*UsageReport, error) {
	now := a.now().UTC()
	since, until := o.Since, o.Until
	if since == "" {
		since = now.AddDate(0, 0, -29).Format("2006-01-02")
	}
	if until == "" {
		until = now.Format("2006-01-02")
	}
	for f, v := range map[string]string{"since": since, "until": until} {
		if _, err := time.Parse("2006-01-02", v); err != nil {
			return nil, errs.Invalidf(f, "format", "%s must be a date YYYY-MM-DD (got %q)", f, v)
		}
	}
	var out *UsageReport
	err := a.st.View(func(tx store.Tx) error {
		var sk storedKey
		found, err := store.Get(tx, store.BucketKeys, []byte(id), &sk)
		if err != nil || !found {
			return err
		}
		u, err := a.usage.read(tx, id)
		if err != nil {
			return err
		}
		m, h, d := windowStarts(now)
		r := &UsageReport{KeyID: id, TotalRequests: u.Total, Daily: []DailyUsage{},
			Minute: WindowUsage{Limit: sk.RateLimit.PerMinute, ResetAt: FormatTime(m.Add(time.Minute))},
			Hour:   WindowUsage{Limit: sk.RateLimit.PerHour, ResetAt: FormatTime(h.Add(time.Hour))},
			Day:    WindowUsage{Limit: sk.RateLimit.PerDay, ResetAt: FormatTime(d.AddDate(0, 0, 1))},
		}
		if u.LastUsedAt != "" {
			last := u.LastUsedAt
			r.LastUsedAt = &last
		}
		if u.MinuteStart == m.UnixMilli() {
			r.Minute.Used = u.MinuteCount
		}
		if u.HourStart == h.UnixMilli() {
			r.Hour.Used = u.HourCount
		}
		if u.DayStart == d.UnixMilli() {
			r.Day.Used = u.DayCount
		}
		if r.Daily, err = a.usage.daily(tx, id, since, until); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, internal(err)
}

// AuditEntry is one action on a key. Actor is who did it ("unknown" when
// the caller named no one); Details is always an object.
type AuditEntry struct {
	ID      string         `json:"id"`
	KeyID   string         `json:"key_id"`
	Action  string         `json:"action"`
	Actor   string         `json:"actor"`
	At      string         `json:"at"`
	Details map[string]any `json:"details"`
}

// UnknownActor is recorded when an operation names no actor.
const UnknownActor = "unknown"

func (a *Admin) audit(tx store.Tx, keyID, action, actor string, details map[string]any) error {
	seq, err := store.NextSeq(tx, "audit")
	if err != nil {
		return err
	}
	if actor == "" {
		actor = UnknownActor
	}
	e := AuditEntry{ID: "aud_" + itoa(seq), KeyID: keyID, Action: action, Actor: actor, At: FormatTime(a.now()), Details: orEmpty(details)}
	return store.Put(tx, store.BucketKeyAudit, store.Key([]byte(keyID), store.U64(seq)), e)
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// GetAPIKeyAuditLog returns every audit entry of a key, oldest first,
// paged; nil for an unknown key.
func (a *Admin) GetAPIKeyAuditLog(id string, p Page) ([]AuditEntry, error) {
	p, err := p.check()
	if err != nil {
		return nil, err
	}
	var out []AuditEntry
	err = a.st.View(func(tx store.Tx) error {
		if tx.Bucket([]byte(store.BucketKeys)).Get([]byte(id)) == nil {
			return nil
		}
		out = []AuditEntry{}
		prefix := store.Key([]byte(id), nil)
		c := tx.Bucket([]byte(store.BucketKeyAudit)).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var e AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			// Entries written before actors were required read the same.
			if e.Actor == "" {
				e.Actor = UnknownActor
			}
			e.Details = orEmpty(e.Details)
			out = append(out, e)
		}
		return nil
	})
	if out == nil {
		return nil, internal(err)
	}
	return paginate(out, p), internal(err)
}
