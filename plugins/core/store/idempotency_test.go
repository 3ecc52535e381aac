package store

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

type idemOut struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

// A key's first call writes and records; a repeat returns the recorded
// output and runs nothing; another scope with the same key is independent.
func TestOnceRecordsAndReplays(t *testing.T) { pgtest.EachStore(t, testOnceRecordsAndReplays) }

func testOnceRecordsAndReplays(t *testing.T) {
	s, _ := openEach(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := 0
	call := func(scope, key string) (idemOut, bool) {
		var out idemOut
		var replayed bool
		err := s.Commit(func(tx kv.Tx) error {
			var err error
			out, replayed, err = Once(tx, scope, key, now, func() (idemOut, error) {
				runs++
				n, err := NextID(tx, CounterTask)
				return idemOut{ID: fmt.Sprint("T-", n), N: runs}, err
			})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, replayed
	}
	first, rep := call("task_create", "sess-1:7")
	if rep || first.ID != "T-1" {
		t.Fatalf("first call %+v replayed=%v", first, rep)
	}
	again, rep := call("task_create", "sess-1:7")
	if !rep || again != first || runs != 1 {
		t.Fatalf("replay %+v replayed=%v runs=%d", again, rep, runs)
	}
	other, rep := call("task_update", "sess-1:7")
	if rep || other.ID != "T-2" {
		t.Fatalf("other scope %+v replayed=%v", other, rep)
	}
	// No key: every call writes, nothing is recorded.
	call("task_create", "")
	call("task_create", "")
	if runs != 4 {
		t.Fatalf("runs %d, want 4", runs)
	}
	_ = s.View(func(tx kv.Tx) error {
		if n := IdempotentCount(tx); n != 2 {
			t.Errorf("recorded %d keys, want 2", n)
		}
		return nil
	})
}

// A failed write records nothing, so the key's next call runs again.
func TestOnceFailureRecordsNothing(t *testing.T) { pgtest.EachStore(t, testOnceFailureRecordsNothing) }

func testOnceFailureRecordsNothing(t *testing.T) {
	s, _ := openEach(t)
	now := time.Now()
	err := s.Commit(func(tx kv.Tx) error {
		_, _, err := Once(tx, "x", "k", now, func() (idemOut, error) { return idemOut{}, fmt.Errorf("refused") })
		return err
	})
	if err == nil || err.Error() != "refused" {
		t.Fatalf("err %v", err)
	}
	_ = s.View(func(tx kv.Tx) error {
		if _, ok := Recorded(tx, "x", "k", now); ok {
			t.Error("a failed call was recorded")
		}
		return nil
	})
}

// Retention: at most IdempotencyMaxKeys are kept (oldest dropped first),
// and a key older than IdempotencyRetention is no longer honoured and is
// pruned by later records.
func TestIdempotencyRetention(t *testing.T) { pgtest.EachStore(t, testIdempotencyRetention) }

func testIdempotencyRetention(t *testing.T) {
	s, _ := openEach(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := s.Update(func(tx kv.Tx) error {
		for i := 0; i < IdempotencyMaxKeys+5; i++ {
			if err := Record(tx, "s", fmt.Sprint("k", i), []byte(`{}`), t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Minute)
	_ = s.View(func(tx kv.Tx) error {
		if n := IdempotentCount(tx); n != IdempotencyMaxKeys {
			t.Errorf("count %d, want %d", n, IdempotencyMaxKeys)
		}
		for i := 0; i < 5; i++ {
			if _, ok := Recorded(tx, "s", fmt.Sprint("k", i), now); ok {
				t.Errorf("k%d should have been dropped", i)
			}
		}
		if _, ok := Recorded(tx, "s", "k5", now); !ok {
			t.Error("k5 dropped too early")
		}
		if _, ok := Recorded(tx, "s", "k5", t0.Add(IdempotencyRetention+time.Hour)); ok {
			t.Error("an expired key is still honoured")
		}
		return nil
	})
	// Records a day later prune the expired ones in batches.
	later := t0.Add(IdempotencyRetention + time.Hour)
	for i := 0; i < IdempotencyMaxKeys/pruneBatch+10; i++ {
		if err := s.Update(func(tx kv.Tx) error { return Record(tx, "s", fmt.Sprint("new", i), []byte(`{}`), later) }); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.View(func(tx kv.Tx) error {
		if n, want := IdempotentCount(tx), uint64(IdempotencyMaxKeys/pruneBatch+10); n != want {
			t.Errorf("count after expiry %d, want %d", n, want)
		}
		if n := tx.Bucket([]byte(BucketIdempotency)).Count(); n != IdempotencyMaxKeys/pruneBatch+10 {
			t.Errorf("bucket holds %d keys", n)
		}
		return nil
	})
}
