package accounts

import (
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// usageCounter keeps the API keys' request counts: the three rate-limit
// windows, the total and the last use, and the count per day. bbolt keeps
// them as records of the admin store, counted inside an admin Update
// (boltUsage); PostgreSQL keeps them in tables of their own, counted by one
// statement that takes no cluster-wide lock (pgUsage), so the requests of
// every server do not queue behind one another.
type usageCounter interface {
	// check counts one request of key id when all three windows have room
	// and announces the usage.threshold_exceeded levels it reaches; 404
	// for an unknown key. Under a keyed call (c) a repeat counts nothing.
	check(id string, c *store.Call) (RateLimitResult, error)
	// read is key id's counters as tx sees them; zero when it was never
	// used. Window counts are those of the window starting at the record's
	// start, which may have passed.
	read(tx store.Tx, id string) (usageRecord, error)
	// daily is key id's count per day from since to until (YYYY-MM-DD,
	// inclusive), in date order.
	daily(tx store.Tx, id, since, until string) ([]DailyUsage, error)
}

// counterFor picks the counter of st's backend.
func counterFor(a *Admin, st *store.Store) usageCounter {
	if pool := st.Postgres(); pool != nil {
		return &pgUsage{a: a, pool: pool}
	}
	return boltUsage{a: a}
}
