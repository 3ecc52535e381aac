package store

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// Reading applies nothing: the step is pending before the store is first
// opened, and still is after a second read; none is once it was opened.
func TestReadMigrationsAppliesNothing(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	for range 2 {
		st, err := ReadMigrations(context.Background(), dsn)
		if err != nil || st.Store != "postgres" || st.Version != 0 || len(st.Pending) != len(Migrations) {
			t.Fatalf("before the store was opened: %+v %v", st, err)
		}
	}
	s, err := OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	st, err := ReadMigrations(context.Background(), dsn)
	if err != nil || st.Version != len(Migrations) || len(st.Pending) != 0 {
		t.Fatalf("after the store was opened: %+v %v", st, err)
	}
	if st, err := ReadMigrations(context.Background(), ""); err != nil || st.Store != "bbolt" {
		t.Fatalf("bbolt: %+v %v", st, err)
	}
}
