package engine

import (
	"os"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// BenchmarkLeaseWritesOutbox measures an issue and a return of a lease
// (two writes, two events) with the events recorded in the state and
// published durably ("outbox") against the floor of the same writes with
// no publisher, so no outbox, in the same run and on each backend.
func BenchmarkLeaseWritesOutbox(b *testing.B) {
	pgtest.EachStore(b, func(b *testing.B) {
		for _, tc := range []struct {
			name    string
			publish PublishFunc
		}{
			{"floor", nil},
			{"outbox", (&recorded{}).publish},
		} {
			b.Run(tc.name, func(b *testing.B) {
				e, err := New(Config{Root: b.TempDir(), Publish: tc.publish, Store: os.Getenv(pgtest.StoreEnv)})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				if _, err := e.Initialize(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					l, err := e.CreateLease("T-1", nil)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := e.ReturnLease(l.LeaseID, "done"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}
