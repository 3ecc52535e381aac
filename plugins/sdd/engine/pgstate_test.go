package engine

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// Three servers on one database issue and return leases at once: every
// lease id is issued once, every issued lease is in the shared document,
// and a lease returned on one server cannot be returned again on another.
func TestLeasesExclusiveAcrossServers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	clock := &fakeClock{t: time.Date(2026, 11, 22, 8, 40, 12, 0, time.UTC)}
	var servers []*Engine
	for range 3 {
		e, err := New(Config{Root: t.TempDir(), Clock: clock.Now, Store: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		if _, err := e.Initialize(); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, e)
	}
	var mu sync.Mutex
	ids := map[string]bool{}
	var wg sync.WaitGroup
	for g := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				l, err := servers[g%3].CreateLease(fmt.Sprintf("T-%d-%d", g, i), nil)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if ids[l.LeaseID] {
					t.Errorf("lease id %s issued twice", l.LeaseID)
				}
				ids[l.LeaseID] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	active, err := servers[1].ListActiveLeases()
	if err != nil || len(active) != 90 || len(ids) != 90 {
		t.Fatalf("%d active leases, %d ids (%v); want 90", len(active), len(ids), err)
	}
	// Every server races to return the same lease; exactly one wins.
	var won sync.WaitGroup
	var wins, losses int
	for _, e := range servers {
		won.Add(1)
		go func() {
			defer won.Done()
			ok, err := e.ReturnLease(active[0].LeaseID, "done")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
			} else if ok {
				wins++
			} else {
				losses++
			}
		}()
	}
	won.Wait()
	if wins != 1 || losses != 2 {
		t.Fatalf("return raced: %d wins, %d losses; want 1 and 2", wins, losses)
	}
}

// A document in the row that does not decode is refused, not replaced.
func TestCorruptRowRefused(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	e, err := New(Config{Root: t.TempDir(), Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if _, err := e.pg.pool.Exec(t.Context(), "UPDATE sdd_state SET doc = '{\"version\":1,' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SetStateValue("a", 1); err == nil {
		t.Fatal("a write over a corrupt document succeeded")
	}
	doc, _ := e.pg.load()
	if string(doc) != `{"version":1,` {
		t.Fatalf("the corrupt document was replaced: %q", doc)
	}
}
