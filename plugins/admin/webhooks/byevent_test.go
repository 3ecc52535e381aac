package webhooks

import (
	"fmt"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// TestQueuedMarksTurnOverInGenerations: a mark is kept for at least the
// window and at least byEventLimit later marks; then its generation is
// dropped whole, and no more than two generations are stored.
func TestQueuedMarksTurnOverInGenerations(t *testing.T) {
	pgtest.EachStore(t, testQueuedMarksTurnOverInGenerations)
}

func testQueuedMarksTurnOverInGenerations(t *testing.T) {
	saved := byEventLimit
	byEventLimit = 3
	defer func() { byEventLimit = saved }()
	st := openStore(t, t.TempDir())
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	mark := func(at time.Duration, ids ...int) {
		t.Helper()
		if err := st.Update(func(tx store.Tx) error {
			for _, id := range ids {
				if err := markQueued(tx, t0.Add(at), fmt.Sprint("evt_", id), "wh_1"); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	// kept lists which of events 1…n are still marked, and checks no
	// more marks are stored than two generations hold.
	kept := func(n int) string {
		t.Helper()
		var out []int
		stored := 0
		_ = st.View(func(tx store.Tx) error {
			for id := 1; id <= n; id++ {
				if queuedFor(tx, fmt.Sprint("evt_", id), "wh_1") {
					out = append(out, id)
				}
			}
			for _, name := range byEventBuckets {
				_ = tx.Bucket([]byte(name)).ForEach(func(_, _ []byte) error { stored++; return nil })
			}
			return nil
		})
		if stored != len(out) {
			t.Fatalf("%d marks stored, %d of them found", stored, len(out))
		}
		return fmt.Sprint(out)
	}
	mark(0, 1, 2, 3)
	mark(time.Minute, 4) // three marks, but the window has not passed
	if got := kept(4); got != "[1 2 3 4]" {
		t.Fatalf("before the window: %s", got)
	}
	mark(11*time.Minute, 5) // a new generation; the first stays readable
	mark(12*time.Minute, 6, 7)
	if got := kept(7); got != "[1 2 3 4 5 6 7]" {
		t.Fatalf("after the first turn: %s", got)
	}
	mark(15*time.Minute, 8) // three later marks, but not the window
	if got := kept(8); got != "[1 2 3 4 5 6 7 8]" {
		t.Fatalf("before the second window: %s", got)
	}
	mark(22*time.Minute, 9) // the first generation goes whole
	if got := kept(9); got != "[5 6 7 8 9]" {
		t.Fatalf("after the second turn: %s", got)
	}
	// A redelivered event whose mark survives queues nothing: the caller
	// (enqueueTx) asks queuedFor first, which TestRedeliveryAfterHistoryPruned
	// holds end to end.
}
