package accounts

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/plugins/admin/store/storetest"
)

// Usage counted on bbolt reaches the PostgreSQL usage tables both ways it
// can get there: `cairn store copy`, and the migration of a database
// written before the tables (usage in admin_kv). Counts, totals, daily
// counts and the levels already announced carry over, so counting goes on
// exactly where it stopped.
func TestUsageMovesIntoTheTables(t *testing.T) {
	for name, move := range storetest.Moves(1) {
		t.Run(name, func(t *testing.T) {
			dir, dsn := t.TempDir(), pgtest.DSN(t)
			c := &clock{t: time.Date(2026, 11, 22, 10, 30, 15, 0, time.UTC)}
			src, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a, _ := New(src, Options{Now: c.now})
			k, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "rl", UserID: "u", RateLimit: &RateLimit{10, 1000, 10000}})
			if err != nil {
				t.Fatal(err)
			}
			c.add(-24 * time.Hour)
			_, _ = a.CheckRateLimit(k.ID) // one request the day before
			c.add(24 * time.Hour)
			for range 8 { // the warning is announced at 8
				_, _ = a.CheckRateLimit(k.ID)
			}
			want, _ := a.GetAPIKeyUsage(k.ID, UsageOptions{})
			src.Close()
			move(t, dir, dsn)

			dst, err := store.OpenPostgres(dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			b, _ := New(dst, Options{Now: c.now})
			got, err := b.GetAPIKeyUsage(k.ID, UsageOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.TotalRequests != 9 || got.Minute.Used != 8 || got.Day.Used != 8 || len(got.Daily) != 2 || got.Daily[0].Requests != 1 || got.Daily[1].Requests != 8 ||
				*got.LastUsedAt != *want.LastUsedAt || got.Minute.ResetAt != want.Minute.ResetAt {
				t.Fatalf("usage after the move: %+v, before: %+v", got, want)
			}
			if kk, _ := b.GetAPIKeyByID(k.ID); kk.Usage.TotalRequests != 9 {
				t.Fatalf("key usage after the move: %+v", kk.Usage)
			}
			drain(t, b)
			for range 3 {
				_, _ = b.CheckRateLimit(k.ID)
			}
			if ev := thresholdEvents(t, b); strings.Join(ev, " ") != "minute:limit@10" {
				t.Fatalf("after the move: events %v, want the limit only (the warning was announced before)", ev)
			}
			if u, _ := b.GetAPIKeyUsage(k.ID, UsageOptions{}); u.Minute.Used != 10 || u.TotalRequests != 11 {
				t.Fatalf("counting after the move: %+v", u)
			}
		})
	}
}
