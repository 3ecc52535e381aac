package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// tpcb is the database's own floor: pgbench's default transaction
// (TPC-B-like: update an account, read it back, update its teller and
// branch, append a history row), from -conns connections for -duration,
// on tables of pgbench's shape and size (-scale branches of 10 tellers and
// 100,000 accounts each). The bundle's PostgreSQL has no pgbench, so this
// is it, written with pgx.
func tpcb(args []string) error {
	fs := flag.NewFlagSet("tpcb", flag.ExitOnError)
	dsn := fs.String("dsn", "", "the database to load (its pgbench_* tables are replaced)")
	conns := fs.Int("conns", 32, "connections, each running transactions back to back")
	scale := fs.Int("scale", 1, "branches (pgbench -s)")
	d := fs.Duration("duration", 10*time.Second, "how long to run")
	_ = fs.Parse(args)
	if *conns < 1 || *scale < 1 {
		return fmt.Errorf("-conns and -scale must be at least 1")
	}
	ctx := context.Background()
	if err := tpcbInit(ctx, *dsn, *scale); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, *conns)
	start := time.Now()
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, *dsn)
			if err != nil {
				errc <- err
				return
			}
			defer conn.Close(ctx)
			rng := rand.New(rand.NewPCG(uint64(c), 11))
			for time.Since(start) < *d {
				if err := tpcbTransaction(ctx, conn, rng, *scale); err != nil {
					errc <- err
					return
				}
				done.Add(1)
			}
		}(c)
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	fmt.Printf("tpcb conns=%d scale=%d tps=%.0f\n", *conns, *scale, float64(done.Load())/time.Since(start).Seconds())
	return nil
}

func tpcbInit(ctx context.Context, dsn string, scale int) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`DROP TABLE IF EXISTS pgbench_history, pgbench_tellers, pgbench_accounts, pgbench_branches`,
		`CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))`,
		`CREATE TABLE pgbench_tellers (tid int NOT NULL PRIMARY KEY, bid int, tbalance int, filler char(84)) WITH (fillfactor=100)`,
		`CREATE TABLE pgbench_accounts (aid int NOT NULL PRIMARY KEY, bid int, abalance int, filler char(84)) WITH (fillfactor=100)`,
		`CREATE TABLE pgbench_branches (bid int NOT NULL PRIMARY KEY, bbalance int, filler char(88)) WITH (fillfactor=100)`,
		fmt.Sprintf(`INSERT INTO pgbench_branches (bid, bbalance) SELECT b, 0 FROM generate_series(1, %d) b`, scale),
		fmt.Sprintf(`INSERT INTO pgbench_tellers (tid, bid, tbalance) SELECT t, (t - 1) / 10 + 1, 0 FROM generate_series(1, %d) t`, scale*10),
		fmt.Sprintf(`INSERT INTO pgbench_accounts (aid, bid, abalance, filler) SELECT a, (a - 1) / 100000 + 1, 0, '' FROM generate_series(1, %d) a`, scale*100_000),
		`VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// tpcbTransaction is pgbench's built-in tpcb-like script.
func tpcbTransaction(ctx context.Context, conn *pgx.Conn, rng *rand.Rand, scale int) error {
	aid := rng.IntN(100_000*scale) + 1
	bid := rng.IntN(scale) + 1
	tid := rng.IntN(10*scale) + 1
	delta := rng.IntN(10_001) - 5000
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2`, delta, aid); err != nil {
		return err
	}
	var balance int
	if err := tx.QueryRow(ctx, `SELECT abalance FROM pgbench_accounts WHERE aid = $1`, aid).Scan(&balance); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2`, delta, tid); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2`, delta, bid); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)`, tid, bid, aid, delta); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
