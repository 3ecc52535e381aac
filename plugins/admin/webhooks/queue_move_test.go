package webhooks

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// A delivery queued on bbolt and not yet attempted is delivered from
// PostgreSQL's queue table after `cairn store copy`, and after the
// migration of a database written before the table (queue in admin_kv).
func TestQueuedDeliveryMovesIntoTheQueue(t *testing.T) {
	for name, move := range map[string]func(t *testing.T, dataDir, dsn string){
		"store copy": func(t *testing.T, dataDir, dsn string) {
			if _, err := store.CopyToPostgres(context.Background(), dataDir, dsn); err != nil {
				t.Fatal(err)
			}
		},
		"migration of an older database": func(t *testing.T, dataDir, dsn string) {
			ctx := context.Background()
			pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			if _, err := pgmigrate.Apply(ctx, pool, store.MigrationArea, store.Migrations[:2]); err != nil {
				t.Fatal(err)
			}
			db, err := kv.OpenBoltSource(filepath.Join(dataDir, store.FileName))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := kv.CopyBolt(ctx, db, pool, "admin_kv", 1, "test"); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, dsn := t.TempDir(), pgtest.DSN(t)
			src, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := newReceiver(t, 0)
			register(t, devManager(t, src), r, "task.*")
			ev := store.Event{ID: "evt_moved", Type: "task.created", Source: "core", Time: "2026-11-22T10:00:00.000Z", Data: []byte(`{"task_id":"T-1"}`)}
			if err := devManager(t, src).EnqueueEvent(ev); err != nil {
				t.Fatal(err)
			}
			src.Close()
			move(t, dir, dsn)
			dst, err := store.OpenPostgres(dsn, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			m := devManager(t, dst)
			if n, err := m.ProcessDue(context.Background()); err != nil || n != 1 || r.calls.Load() != 1 {
				t.Fatalf("after the move: %d attempted (%v), webhook called %d times; want the queued delivery once", n, err, r.calls.Load())
			}
			if n, _ := m.ProcessDue(context.Background()); n != 0 || !m.nextDue().IsZero() {
				t.Fatalf("the queue still holds %d due deliveries", n)
			}
		})
	}
}
