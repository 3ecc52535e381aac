package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// Reading applies nothing: every step is pending until an engine opens the
// store, none after.
func TestReadMigrationsAppliesNothing(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	all := make([]int, len(Migrations))
	for i := range all {
		all[i] = i + 1
	}
	for range 2 {
		st, err := ReadMigrations(context.Background(), dsn)
		if err != nil || st.Store != "postgres" || st.Version != 0 || st.Latest != len(Migrations) || !slices.Equal(st.Pending, all) {
			t.Fatalf("before the store was opened: %+v %v", st, err)
		}
	}
	e, err := New(Config{Root: t.TempDir(), Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	st, err := ReadMigrations(context.Background(), dsn)
	if err != nil || st.Version != len(Migrations) || len(st.Pending) != 0 {
		t.Fatalf("after the store was opened: %+v %v", st, err)
	}
}
