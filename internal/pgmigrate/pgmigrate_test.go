package pgmigrate

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var steps = []Step{
	{1, "counter", "CREATE TABLE m_counter (n integer NOT NULL)"},
	{2, "seed", "INSERT INTO m_counter VALUES (1)"},
}

// Eight servers starting at once apply each step exactly once.
func TestApplyConcurrentStartsApplyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	applied := make(chan []int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := Connect(ctx, dsn, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer pool.Close()
			st, err := Apply(ctx, pool, "test", steps)
			if err != nil {
				t.Error(err)
				return
			}
			if st.Version != 2 {
				t.Errorf("version after Apply = %d, want 2", st.Version)
			}
			applied <- st.Applied
		}()
	}
	wg.Wait()
	close(applied)
	total := 0
	for a := range applied {
		total += len(a)
	}
	if total != 2 {
		t.Fatalf("steps applied in all = %d, want 2", total)
	}
	pool, err := Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM m_counter").Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("seed rows = %d (%v), want 1", rows, err)
	}
	st, err := Read(ctx, pool, "test", append(steps, Step{3, "more", "SELECT 1"}))
	if err != nil || st.Version != 2 || len(st.Pending) != 1 || st.Pending[0] != 3 {
		t.Fatalf("Read = %+v, %v; want version 2, pending [3]", st, err)
	}
}

func TestApplyRefusesNewerSchemaAndBadSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := Connect(ctx, pgtest.DSN(t), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := Apply(ctx, pool, "test", steps); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, pool, "test", steps[:1]); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Apply with fewer steps = %v, want a newer-schema error", err)
	}
	if _, err := Apply(ctx, pool, "other", []Step{{2, "gap", "SELECT 1"}}); err == nil {
		t.Fatal("Apply accepted a step list with a gap")
	}
	// A failing step leaves nothing behind.
	bad := append(steps, Step{3, "broken", "CREATE TABLE m_x (n int); SELECT * FROM no_such_table"})
	if _, err := Apply(ctx, pool, "test", bad); err == nil {
		t.Fatal("Apply of a broken step succeeded")
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass('m_x') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("a failed migration left its table behind (%v)", err)
	}
}

func TestRedactHidesPasswords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, hidden string }{
		{"postgres://u:secret@db:5432/cairn", "secret"},
		{"postgres://u@db/cairn?password=secret", "secret"},
	} {
		if got := Redact(c.in); strings.Contains(got, c.hidden) {
			t.Errorf("Redact(%q) = %q still shows the password", c.in, got)
		}
	}
}
