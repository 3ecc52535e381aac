package webhooks

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
	"github.com/cairn-mcp/cairn/plugins/admin/store/storetest"
)

// A delivery queued on bbolt and not yet attempted is delivered from
// PostgreSQL's queue table after `cairn store copy`, and after the
// migration of a database written before the table (queue in admin_kv).
func TestQueuedDeliveryMovesIntoTheQueue(t *testing.T) {
	for name, move := range storetest.Moves(2) {
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
