package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The state document of a data dir reaches the database unchanged, so an
// engine there sees its leases; a second copy is refused naming "to"; a
// data dir without a document has nothing to copy.
func TestCopyState(t *testing.T) {
	t.Parallel()
	root, dsn := t.TempDir(), pgtest.DSN(t)
	clock := &fakeClock{t: time.Date(2026, 11, 22, 8, 40, 12, 123e6, time.UTC)}
	e, err := New(Config{Root: root, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Initialize(); err != nil {
		t.Fatal(err)
	}
	lease, err := e.CreateLease("T-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	dataDir := filepath.Join(root, ".cairn", "data")
	rep, err := CopyState(context.Background(), dataDir, dsn)
	if err != nil || !rep.Found || rep.Bytes == 0 {
		t.Fatalf("copy: %+v %v", rep, err)
	}
	pg, err := New(Config{Root: t.TempDir(), Clock: clock.Now, Store: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if _, err := pg.Initialize(); err != nil {
		t.Fatal(err)
	}
	if ok, err := pg.ReturnLease(lease.LeaseID, "done"); err != nil || !ok {
		t.Fatalf("return the copied lease on PostgreSQL: %v %v", ok, err)
	}
	_, err = CopyState(context.Background(), dataDir, dsn)
	if e, ok := errs.As(err); !ok || e.Details["field"] != "to" {
		t.Fatalf("second copy: %v", err)
	}
	if rep, err := CopyState(context.Background(), t.TempDir(), dsn); err != nil || rep.Found {
		t.Fatalf("copy of a data dir without state: %+v %v", rep, err)
	}
}
