package kv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// stallServers opens n PGs on one fresh database whose transactions give
// up after stall without an answer, and wait up to a minute for the lock.
func stallServers(t *testing.T, n int, stall time.Duration) []*PG {
	t.Helper()
	dsn := pgtest.DSN(t)
	var out []*PG
	for i := range n {
		pool, err := pgmigrate.Connect(context.Background(), dsn, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := pool.Exec(context.Background(), TableSQL("stall_kv")); err != nil {
				t.Fatal(err)
			}
		}
		pg, err := NewPG(pool, PGConfig{Area: "test", Table: "stall_kv", Lock: 0x5374616c6c, Where: "test", LockTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		pg.stall = stall
		t.Cleanup(pg.Close)
		out = append(out, pg)
	}
	return out
}

// A transaction that lasts longer than the stall limit, every statement
// answered, commits: a loaded machine makes a big transaction slow, not
// stuck (docs/decisions.md D42). A deadline on the whole transaction, as
// there was, failed it.
func TestALongTransactionThatGetsAnswersCommits(t *testing.T) {
	const stall = 2 * time.Second
	pg := stallServers(t, 1, stall)[0]
	start := time.Now()
	err := pg.Update(func(tx Tx) error {
		b := tx.Bucket([]byte("b"))
		for i := range 4 {
			if i > 0 {
				// The transaction's own work between statements.
				time.Sleep(stall * 2 / 5)
			}
			_ = b.Get([]byte{byte(i)})
			if err := b.Put([]byte{byte(i)}, []byte("x")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a transaction of %s, every statement answered, failed: %v", time.Since(start).Round(time.Millisecond), err)
	}
	if took := time.Since(start); took <= stall {
		t.Fatalf("the transaction took %s, not longer than the stall limit %s: it proves nothing", took, stall)
	}
}

// A round trip the database does not answer within the stall limit (here
// a wait for the lock another transaction holds) fails the transaction,
// saying so, long before it would have been answered.
func TestAStalledTransactionFailsSayingSo(t *testing.T) {
	const stall = time.Second
	pgs := stallServers(t, 2, stall)
	holding, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- pgs[0].Update(func(tx Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-held:
		t.Fatalf("the first update could not take the lock: %v", err)
	}
	start := time.Now()
	err := pgs[1].Update(func(tx Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v")) })
	took := time.Since(start)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "answered nothing for 1s") {
		t.Fatalf("an update waiting for a held lock ended with %v, want the stall named", err)
	}
	if took >= 30*time.Second {
		t.Fatalf("the stalled update took %s to fail", took)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
