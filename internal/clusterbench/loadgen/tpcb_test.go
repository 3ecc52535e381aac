package main

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The floor's transactions are whole: after many of them, from several
// connections at once, every delta is in the accounts, the tellers, the
// branches and the history alike, as pgbench's would be.
func TestTPCBTransactionsKeepTheBalances(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const scale = 2
	if err := tpcbInit(ctx, dsn, scale); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				errc <- err
				return
			}
			defer conn.Close(ctx)
			rng := rand.New(rand.NewPCG(uint64(c), 3))
			for i := 0; i < 50; i++ {
				if err := tpcbTransaction(ctx, conn, rng, scale); err != nil {
					errc <- err
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var accounts, tellers, branches, history, rows int64
	err = conn.QueryRow(ctx, `SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),
		(SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history), (SELECT count(*) FROM pgbench_history)`).
		Scan(&accounts, &tellers, &branches, &history, &rows)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 200 {
		t.Fatalf("%d history rows, want 200", rows)
	}
	if accounts != history || tellers != history || branches != history {
		t.Fatalf("balances differ: accounts %d, tellers %d, branches %d, history %d", accounts, tellers, branches, history)
	}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pgbench_accounts`).Scan(&n); err != nil || n != scale*100_000 {
		t.Fatalf("%d accounts (%v), want %d", n, err, scale*100_000)
	}
}
