package store

import (
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"math/rand/v2"
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

// Retention: at most IdempotencyMaxKeys are kept, in two generations; a
// full generation drops the older one whole, so a key survives at least
// IdempotencyMaxKeys/2 later keys; a key older than IdempotencyRetention is
// no longer honoured, and a generation that old is dropped by the next
// record.
func TestIdempotencyRetention(t *testing.T) { pgtest.EachStore(t, testIdempotencyRetention) }

func testIdempotencyRetention(t *testing.T) {
	s, _ := openEach(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = IdempotencyMaxKeys + 5
	err := s.Update(func(tx kv.Tx) error {
		for i := 0; i < n; i++ {
			if err := Record(tx, "s", fmt.Sprint("k", i), []byte(`{}`), t0.Add(time.Duration(i)*time.Millisecond)); err != nil {
				return err
			}
			if c := IdempotentCount(tx); c > IdempotencyMaxKeys {
				return fmt.Errorf("after %d records %d keys kept, more than %d", i+1, c, IdempotencyMaxKeys)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Minute)
	_ = s.View(func(tx kv.Tx) error {
		// k0..k4999 filled the first generation, k5000..k9999 the second;
		// k10000 dropped the first.
		if c, want := IdempotentCount(tx), uint64(n-generationKeys); c != want {
			t.Errorf("count %d, want %d", c, want)
		}
		for _, i := range []int{0, 1, generationKeys - 1} {
			if _, ok := Recorded(tx, "s", fmt.Sprint("k", i), now); ok {
				t.Errorf("k%d should have been dropped", i)
			}
		}
		for _, i := range []int{generationKeys, IdempotencyMaxKeys - 1, IdempotencyMaxKeys, n - 1} {
			if _, ok := Recorded(tx, "s", fmt.Sprint("k", i), now); !ok {
				t.Errorf("k%d dropped too early", i)
			}
		}
		if _, ok := Recorded(tx, "s", fmt.Sprint("k", n-1), t0.Add(IdempotencyRetention+time.Hour)); ok {
			t.Error("an expired key is still honoured")
		}
		return nil
	})
	// A record a day later finds its generation too old: the older one
	// goes, and the expired keys left are no longer honoured.
	later := t0.Add(IdempotencyRetention + time.Hour)
	if err := s.Update(func(tx kv.Tx) error { return Record(tx, "s", "new", []byte(`{}`), later) }); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(tx kv.Tx) error {
		if c, want := IdempotentCount(tx), uint64(n-IdempotencyMaxKeys+1); c != want {
			t.Errorf("count after a day %d, want %d", c, want)
		}
		if _, ok := Recorded(tx, "s", "new", later); !ok {
			t.Error("the new key is not honoured")
		}
		if _, ok := Recorded(tx, "s", fmt.Sprint("k", n-1), later); ok {
			t.Error("an expired key is still honoured")
		}
		return nil
	})
}

// Whatever the pace of records, the last IdempotencyMaxKeys/2 keys recorded
// within the retention are honoured and no more than IdempotencyMaxKeys
// are kept; a key re-recorded in the current generation is counted once.
func TestIdempotencyGenerationsKeepTheRecent(t *testing.T) {
	s, _ := openEach(t)
	rng := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// calls lists the keys in the order they were recorded, re-records
	// included; at says when each key was last recorded.
	var calls []string
	last := map[string]time.Time{}
	record := func(tx kv.Tx, key string) error {
		calls = append(calls, key)
		last[key] = at
		return Record(tx, "s", key, []byte(`{}`), at)
	}
	err := s.Update(func(tx kv.Tx) error {
		for i := 0; i < 3*IdempotencyMaxKeys; i++ {
			switch r := rng.IntN(20000); {
			case r == 0: // a quiet day
				at = at.Add(IdempotencyRetention + time.Duration(rng.IntN(3600))*time.Second)
			case r <= 40: // a quiet hour
				at = at.Add(time.Hour)
			default:
				at = at.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
			}
			if err := record(tx, fmt.Sprint("k", i)); err != nil {
				return err
			}
			if rng.IntN(50) == 0 { // a client re-sends a key it used before
				if err := record(tx, fmt.Sprint("k", max(0, i-rng.IntN(100)))); err != nil {
					return err
				}
			}
			if c := IdempotentCount(tx); c > IdempotencyMaxKeys {
				return fmt.Errorf("after %d records %d keys kept", len(calls), c)
			}
			if len(calls) < generationKeys {
				continue
			}
			k := calls[len(calls)-generationKeys]
			if at.Sub(last[k]) <= IdempotencyRetention {
				if _, ok := Recorded(tx, "s", k, at); !ok {
					return fmt.Errorf("%s, recorded %v before and %d records ago, was dropped", k, at.Sub(last[k]), generationKeys-1)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
