package store

import (
	"context"
	"slices"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestReadMigrationsOfSettings(t *testing.T) {
	for _, tc := range []struct {
		setting, store string
		status         int
	}{
		{"", "bbolt", 0},
		{"bbolt", "bbolt", 0},
		{"mysql://x", "", 400},
		{"postgres://cairn@127.0.0.1:1/none?connect_timeout=1", "", 503},
	} {
		got, err := ReadMigrations(context.Background(), tc.setting)
		if tc.status != 0 {
			if e, ok := errs.As(err); !ok || e.Status != tc.status {
				t.Errorf("%q: error %v, want status %d", tc.setting, err, tc.status)
			}
			continue
		}
		if err != nil || got.Store != tc.store || got.Area != MigrationArea || len(got.Pending) != 0 {
			t.Errorf("%q: %+v %v", tc.setting, got, err)
		}
	}
}

// Reading applies nothing: every step is pending before the store is first
// opened, and still is after a second read; none is once it was opened.
func TestReadMigrationsAppliesNothing(t *testing.T) {
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
	s, err := OpenPostgres(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	st, err := ReadMigrations(context.Background(), dsn)
	if err != nil || st.Version != len(Migrations) || len(st.Pending) != 0 {
		t.Fatalf("after the store was opened: %+v %v", st, err)
	}
}
