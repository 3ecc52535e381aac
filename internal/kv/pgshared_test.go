package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// sharedServers opens n "servers" on one database: each its own pool and
// PG, ordered by the writers' table as an area is.
func sharedServers(t *testing.T, n int) []*PG {
	return sharedServersWaiting(t, n, 5*time.Second)
}

// sharedServersWaiting is sharedServers whose updates wait at most
// lockTimeout for the writers' lock.
func sharedServersWaiting(t *testing.T, n int, lockTimeout time.Duration) []*PG {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	var out []*PG
	for i := range n {
		pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			for _, sql := range []string{TableSQL("shared_kv"), WritersSQL("shared_writers")} {
				if _, err := pool.Exec(ctx, sql); err != nil {
					t.Fatal(err)
				}
			}
		}
		pg, err := NewPG(pool, PGConfig{Area: "test", Table: "shared_kv", Writers: "shared_writers", Where: "test", LockTimeout: lockTimeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Close)
		out = append(out, pg)
	}
	return out
}

func u64At(b Bucket, key string) uint64 {
	if v := b.Get([]byte(key)); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// Shared updates hold the writers' lock together: each of two waits,
// inside its transaction, for the other to have started.
func TestSharedUpdatesRunSideBySide(t *testing.T) {
	t.Parallel()
	pgs := sharedServers(t, 2)
	var started sync.WaitGroup
	started.Add(2)
	errc := make(chan error, 2)
	for i, pg := range pgs {
		go func() {
			errc <- pg.UpdateShared(func(tx Tx) error {
				started.Done()
				done := make(chan struct{})
				go func() { started.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(time.Minute):
					t.Errorf("server %d: the other shared update never ran beside this one", i)
				}
				return tx.Bucket([]byte("b")).Put([]byte{byte(i)}, []byte("x"))
			})
		}()
	}
	for range pgs {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// Many servers changing the same keys at once in shared updates lose no
// change: every read-modify-write that raced another runs again. Counters
// drawn with IncrementEach are never handed out twice, and an exclusive update
// in the middle of it all sees a state no shared update is half through.
func TestSharedUpdatesLoseNoChange(t *testing.T) {
	t.Parallel()
	pgs := sharedServers(t, 3)
	const perServer, workers = 40, 3
	var mu sync.Mutex
	drawn := map[uint64]int{}
	var wg sync.WaitGroup
	errc := make(chan error, len(pgs)*workers+1)
	for _, pg := range pgs {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perServer {
					var n uint64
					err := pg.UpdateShared(func(tx Tx) error {
						b := tx.Bucket([]byte("b"))
						// "sum" and "pairs" always change together.
						sum, pairs := u64At(b, "sum"), u64At(b, "pairs")
						var err error
						drawn, err := tx.IncrementEach(Key{Bucket: []byte("counters"), Key: []byte("n")})
						if err != nil {
							return err
						}
						n = drawn[0]
						if err := b.Put([]byte("sum"), binary.BigEndian.AppendUint64(nil, sum+2)); err != nil {
							return err
						}
						return b.Put([]byte("pairs"), binary.BigEndian.AppendUint64(nil, pairs+1))
					})
					if err != nil {
						errc <- err
						return
					}
					mu.Lock()
					drawn[n]++
					mu.Unlock()
				}
			}()
		}
	}
	// An exclusive reader-writer in the middle: it must always find the
	// pair consistent.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			err := pgs[0].Update(func(tx Tx) error {
				b := tx.Bucket([]byte("b"))
				if s, p := u64At(b, "sum"), u64At(b, "pairs"); s != 2*p {
					t.Errorf("exclusive update saw sum %d for %d pairs", s, p)
				}
				return nil
			})
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	total := uint64(len(pgs) * workers * perServer)
	if err := pgs[1].View(func(tx Tx) error {
		b := tx.Bucket([]byte("b"))
		if s, p := u64At(b, "sum"), u64At(b, "pairs"); p != total || s != 2*total {
			t.Errorf("after %d updates: pairs %d, sum %d", total, p, s)
		}
		if n := u64At(tx.Bucket([]byte("counters")), "n"); n < total {
			t.Errorf("counter at %d after %d draws", n, total)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for n, times := range drawn {
		if times != 1 || n == 0 {
			t.Errorf("number %d handed out %d times", n, times)
		}
	}
	if uint64(len(drawn)) != total {
		t.Errorf("%d distinct numbers for %d updates", len(drawn), total)
	}
}

// A shared update that asks to run alone runs again as an exclusive
// update: no shared update runs beside that run, and its first run's
// writes are gone.
func TestAloneRunsTheUpdateAgainExclusively(t *testing.T) {
	t.Parallel()
	pgs := sharedServers(t, 2)
	runs := 0
	err := pgs[0].UpdateShared(func(tx Tx) error {
		runs++
		if err := tx.Bucket([]byte("b")).Put([]byte(fmt.Sprint("run", runs)), []byte("x")); err != nil {
			return err
		}
		if !tx.Concurrent() {
			// The exclusive run: a shared update of the other server must
			// wait for it.
			blocked := make(chan error, 1)
			go func() {
				blocked <- pgs[1].UpdateShared(func(tx Tx) error { return nil })
			}()
			select {
			case err := <-blocked:
				t.Errorf("a shared update ran beside an exclusive one (%v)", err)
			case <-time.After(300 * time.Millisecond):
			}
			return nil
		}
		return tx.Alone()
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 {
		t.Fatalf("ran %d times, want a shared run and an exclusive one", runs)
	}
	if err := pgs[0].View(func(tx Tx) error {
		b := tx.Bucket([]byte("b"))
		if b.Get([]byte("run1")) != nil || b.Get([]byte("run2")) == nil {
			t.Error("the shared run's write survived, or the exclusive run's did not")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A shared update that waited for an exclusive one sees what it wrote:
// its snapshot is taken after the lock, not when it began to wait.
func TestSharedUpdateSeesTheExclusiveUpdateItWaitedFor(t *testing.T) {
	t.Parallel()
	pgs := sharedServers(t, 2)
	inside := make(chan struct{})
	release := make(chan struct{})
	go func() {
		_ = pgs[0].Update(func(tx Tx) error {
			close(inside)
			<-release
			return tx.Bucket([]byte("b")).Put([]byte("seen"), []byte("yes"))
		})
	}()
	<-inside
	got := make(chan []byte, 1)
	go func() {
		_ = pgs[1].UpdateShared(func(tx Tx) error {
			got <- bytes.Clone(tx.Bucket([]byte("b")).Get([]byte("seen")))
			return nil
		})
	}()
	// Release the exclusive update once the shared one waits for its lock.
	poll.Until(t, time.Minute, "the shared update to wait for the lock", func() bool {
		var waiting int
		err := pgs[0].pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting > 0
	})
	close(release)
	if v := <-got; string(v) != "yes" {
		t.Fatalf("the shared update read %q, not the exclusive update's write", v)
	}
}

// Prefetch answers later Gets as they would have been answered, present,
// absent and written-in-this-transaction alike; Fresh answers nil; and
// IncrementEach raises each counter once, in or out of a shared update.
func TestPrefetchFreshAndIncrementEach(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, r runner) {
		if err := r.update(func(tx Tx) error {
			return tx.Bucket([]byte("b")).Put([]byte("there"), []byte("v1"))
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.update(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			if err := b.Put([]byte("mine"), []byte("v2")); err != nil {
				return err
			}
			tx.Prefetch(Key{Bucket: []byte("b"), Key: []byte("there")}, Key{Bucket: []byte("b"), Key: []byte("absent")}, Key{Bucket: []byte("b"), Key: []byte("mine")})
			if v := b.Get([]byte("there")); string(v) != "v1" {
				t.Errorf("prefetched there = %q", v)
			}
			if v := b.Get([]byte("absent")); v != nil {
				t.Errorf("prefetched absent = %q", v)
			}
			if v := b.Get([]byte("mine")); string(v) != "v2" {
				t.Errorf("prefetched mine = %q, not the transaction's own write", v)
			}
			b.Fresh([]byte("new"))
			if v := b.Get([]byte("new")); v != nil {
				t.Errorf("fresh key = %q", v)
			}
			for want := uint64(1); want <= 2; want++ {
				n, err := tx.IncrementEach(Key{Bucket: []byte("c"), Key: []byte("x")}, Key{Bucket: []byte("c"), Key: []byte("y")})
				if err != nil || n[0] != want || n[1] != want {
					t.Errorf("IncrementEach %v %v, want %d twice", n, err, want)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	pgs := sharedServers(t, 1)
	// A number drawn ahead is the next IncrementEach's; the counter moved once.
	if err := pgs[0].UpdateShared(func(tx Tx) error {
		if err := tx.DrawAhead(Key{Bucket: []byte("c"), Key: []byte("A")}); err != nil {
			return err
		}
		a := Key{Bucket: []byte("c"), Key: []byte("A")}
		if n, err := tx.IncrementEach(a); err != nil || n[0] != 1 {
			t.Errorf("increment after drawing ahead: %v %v, want 1", n, err)
		}
		if n, err := tx.IncrementEach(a); err != nil || n[0] != 2 {
			t.Errorf("second increment: %v %v, want 2", n, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= 2; want++ {
		if err := pgs[0].UpdateShared(func(tx Tx) error {
			n, err := tx.IncrementEach(Key{Bucket: []byte("c"), Key: []byte("T")}, Key{Bucket: []byte("p"), Key: []byte("demo")})
			if err != nil || n[0] != want || n[1] != want {
				t.Errorf("drawn %v %v, want %d twice", n, err, want)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// A shared update that runs again (here: asks to run alone) takes first
// the numbers its earlier attempt drew for kept counters, so it leaves no
// gap; a counter not kept is drawn afresh.
func TestRerunKeepsKeptNumbers(t *testing.T) {
	t.Parallel()
	pgs := sharedServers(t, 1)
	kept := Key{Bucket: []byte("c"), Key: []byte("T"), Keep: true}
	fresh := Key{Bucket: []byte("c"), Key: []byte("R")}
	var got [][2]uint64
	if err := pgs[0].UpdateShared(func(tx Tx) error {
		if err := tx.DrawAhead(kept, fresh); err != nil {
			return err
		}
		n, err := tx.IncrementEach(kept, fresh)
		if err != nil {
			return err
		}
		got = append(got, [2]uint64{n[0], n[1]})
		if tx.Concurrent() {
			return tx.Alone()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0] != 1 || got[1][0] != 1 || got[1][1] == got[0][1] {
		t.Fatalf("attempts drew %v: want the kept counter's 1 twice and the other counter afresh", got)
	}
	if err := pgs[0].View(func(tx Tx) error {
		if n := u64At(tx.Bucket([]byte("c")), "T"); n != 1 {
			t.Errorf("kept counter at %d after a rerun, want 1", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// With the writers' table held exclusively elsewhere (a stuck server), a
// shared update and an exclusive one each give up after LockTimeout with
// ERR_UNAVAILABLE saying so; once it is free they run.
func TestWritersTableGivesUpOnAHeldLock(t *testing.T) {
	t.Parallel()
	pg := sharedServersWaiting(t, 1, 200*time.Millisecond)[0]
	ctx := context.Background()
	holder, err := pg.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "LOCK TABLE shared_writers IN EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	put := func(tx Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v")) }
	for name, update := range map[string]func(func(Tx) error) error{"shared": pg.UpdateShared, "exclusive": pg.Update} {
		err := update(put)
		if e, ok := errs.As(err); !ok || e.Code != errs.Unavailable || !strings.Contains(e.Message, "stayed locked") {
			t.Fatalf("%s update under a held lock: %v", name, err)
		}
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pg.UpdateShared(put); err != nil {
		t.Fatalf("shared update after the lock was freed: %v", err)
	}
}
