package accounts

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// On bbolt each operation runs one transaction on the file the process
// holds open; on PostgreSQL one transaction on a pooled connection (see
// package store). These measure that cost end to end on both; compare
// CheckRateLimit on bbolt with BenchmarkBoltCommitFloor of the same run.

// BenchmarkBoltCommitFloor is the floor of every durable bbolt write: a
// bare transaction that puts one key and fsyncs, on an open file.
func BenchmarkBoltCommitFloor(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	commit := func(i int) error {
		return db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("k"))
			if err != nil {
				return err
			}
			return bk.Put([]byte{byte(i >> 8), byte(i)}, []byte("v"))
		})
	}
	for i := 0; i < 50; i++ { // past the file's first growth
		if err := commit(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := commit(i); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateAPIKey(b *testing.B) { pgtest.EachStore(b, benchmarkValidateAPIKey) }

func benchmarkValidateAPIKey(b *testing.B) {
	a, _, _ := newAdmin(b)
	a.now = time.Now
	for i := 0; i < 100; i++ {
		if _, err := a.CreateAPIKey(CreateAPIKeyOptions{Name: "filler", UserID: "u"}); err != nil {
			b.Fatal(err)
		}
	}
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "bench", UserID: "u"})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := a.ValidateAPIKey(k.PlaintextKey)
		if err != nil || !v.Valid {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkValidateAPIKeyMalformed(b *testing.B) {
	pgtest.EachStore(b, benchmarkValidateAPIKeyMalformed)
}

func benchmarkValidateAPIKeyMalformed(b *testing.B) {
	a, _, _ := newAdmin(b)
	for i := 0; i < b.N; i++ {
		if v, _ := a.ValidateAPIKey("cairn_not-a-key"); v.Reason != ReasonMalformed {
			b.Fatal(v)
		}
	}
}

// BenchmarkCheckRateLimit is a durable write (fsync) per call.
func BenchmarkCheckRateLimit(b *testing.B) { pgtest.EachStore(b, benchmarkCheckRateLimit) }

func benchmarkCheckRateLimit(b *testing.B) {
	a, _, _ := newAdmin(b)
	a.now = time.Now
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "bench", UserID: "u", RateLimit: &RateLimit{PerMinute: 100_000_000, PerHour: 100_000_000, PerDay: 100_000_000}})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err := a.CheckRateLimit(k.ID); err != nil || !r.Allowed {
			b.Fatal(r, err)
		}
	}
}

func BenchmarkCheckRateLimitParallel(b *testing.B) {
	pgtest.EachStore(b, benchmarkCheckRateLimitParallel)
}

func benchmarkCheckRateLimitParallel(b *testing.B) {
	a, _, _ := newAdmin(b)
	a.now = time.Now
	k, _ := a.CreateAPIKey(CreateAPIKeyOptions{Name: "bench", UserID: "u", RateLimit: &RateLimit{PerMinute: 100_000_000, PerHour: 100_000_000, PerDay: 100_000_000}})
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.CheckRateLimit(k.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
