package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// Three servers record idempotency keys beside each other (shared
// updates, under grants) past a generation's size: every committed state
// keeps at most IdempotencyMaxKeys keys, the count and the grants account
// for exactly the keys the current generation holds, and every key is
// honoured until IdempotencyMaxKeys/2 later keys have been recorded.
func TestIdempotencyGrantsKeepTheBoundsAcrossServers(t *testing.T) {
	dsn := pgtest.DSN(t)
	var stores []*Store
	for range 3 {
		s, err := OpenPostgres(dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const total, workers = generationKeys + generationKeys/5, 4
	var (
		next atomic.Int64
		mu   sync.Mutex
		done []int // key numbers in commit order (per committer, roughly)
		wg   sync.WaitGroup
	)
	check := func(s *Store) error {
		return s.View(func(tx kv.Tx) error {
			if c := IdempotentCount(tx); c > IdempotencyMaxKeys {
				return fmt.Errorf("%d keys kept", c)
			}
			meta := tx.Bucket([]byte(BucketMeta))
			current, _ := generations(meta)
			if held, counted := uint64(tx.Bucket(current).Count()), getU64(meta, keyIdemCount)+grantsUsed(tx); held != counted {
				return fmt.Errorf("the current generation holds %d keys, the count and grants say %d", held, counted)
			}
			if c, g := getU64(meta, keyIdemCount), getU64(meta, keyIdemGranted); c+g > generationKeys {
				return fmt.Errorf("count %d and %d keys granted exceed a generation", c, g)
			}
			return nil
		})
	}
	for _, s := range stores {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					n := int(next.Add(1))
					if n > total {
						return
					}
					err := s.CommitShared(func(tx kv.Tx) error {
						return Record(tx, "s", fmt.Sprint("k", n), []byte(`{}`), at)
					})
					if err == nil && n%250 == 0 {
						err = check(s)
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					done = append(done, n)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if err := check(stores[0]); err != nil {
		t.Fatal(err)
	}
	// The last generationKeys/2 keys committed are certainly honoured.
	if err := stores[1].View(func(tx kv.Tx) error {
		for _, n := range done[len(done)-generationKeys/2:] {
			if _, ok := Recorded(tx, "s", fmt.Sprint("k", n), at); !ok {
				return fmt.Errorf("k%d, among the last %d keys, was dropped", n, generationKeys/2)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var shared, alone uint64
	for _, s := range stores {
		st := s.SharedStats()
		shared, alone = shared+st.Committed, alone+st.Alone
	}
	t.Logf("%d shared commits, %d ran again alone", shared, alone)
	if shared == 0 || alone > shared/4 {
		t.Fatalf("%d shared commits and %d exclusive reruns: the grants do not keep writers beside each other", shared, alone)
	}
}
