package accounts

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// BenchmarkCheckRateLimitServers is CheckRateLimit on PostgreSQL from 1
// and from 3 connection pools at once, each pool standing for a cairn
// server, with every client on one key or each on its own: the figures say
// whether servers (and keys) wait on each other to count a request.
// Compare pools=3 with pools=1 of the same run.
func BenchmarkCheckRateLimitServers(b *testing.B) {
	dsn := pgtest.DSN(b)
	for _, keys := range []string{"one", "per-client"} {
		for _, pools := range []int{1, 3} {
			b.Run(fmt.Sprintf("keys=%s/pools=%d", keys, pools), func(b *testing.B) {
				libs := make([]*Admin, pools)
				for i := range libs {
					st, err := store.OpenPostgres(dsn, store.Options{})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(st.Close)
					if libs[i], err = New(st, Options{}); err != nil {
						b.Fatal(err)
					}
				}
				big := 100_000_000
				newKey := func() string {
					k, err := libs[0].CreateAPIKey(CreateAPIKeyOptions{Name: "bench", UserID: "u", RateLimit: &RateLimit{PerMinute: big, PerHour: big, PerDay: big}})
					if err != nil {
						b.Fatal(err)
					}
					return k.ID
				}
				shared := newKey()
				var next atomic.Int64
				b.SetParallelism(2) // 2×GOMAXPROCS clients in all, spread over the pools
				b.ResetTimer()
				start := time.Now()
				b.RunParallel(func(pb *testing.PB) {
					lib, id := libs[int(next.Add(1))%pools], shared
					if keys == "per-client" {
						id = newKey()
					}
					for pb.Next() {
						if r, err := lib.CheckRateLimit(id); err != nil || !r.Allowed {
							b.Error(r, err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "checks/s")
			})
		}
	}
}
