package store

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := OpenFor(dir, os.Getenv(SettingEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func TestCursorOrderAndMoves(t *testing.T) { pgtest.EachStore(t, testCursorOrderAndMoves) }

// More keys than one cursor page, walked both ways, with seeks between
// keys and past the ends, must read the same on both backends.
func testCursorOrderAndMoves(t *testing.T) {
	st := open(t, t.TempDir())
	const n = 150
	if err := st.Update(func(tx Tx) error {
		b := tx.Bucket([]byte(BucketOutbox))
		for i := n - 1; i >= 0; i-- {
			if err := b.Put(Key(U64(uint64(i*2)), []byte("k")), []byte(fmt.Sprint(i))); err != nil {
				return err
			}
		}
		return b.Put([]byte{0xff}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	err := st.View(func(tx Tx) error {
		b := tx.Bucket([]byte(BucketOutbox))
		if v := b.Get([]byte{0xff}); v == nil || len(v) != 0 {
			return fmt.Errorf("an empty value reads as %v, want empty and non-nil", v)
		}
		if v := b.Get([]byte("absent")); v != nil {
			return fmt.Errorf("an absent key reads as %q", v)
		}
		c := b.Cursor()
		count := 0
		var prev []byte
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				return fmt.Errorf("keys out of order: %x then %x", prev, k)
			}
			prev = append(prev[:0], k...)
			count++
		}
		if count != n+1 {
			return fmt.Errorf("forward walk saw %d keys, want %d", count, n+1)
		}
		count = 0
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			count++
		}
		if count != n+1 {
			return fmt.Errorf("backward walk saw %d keys, want %d", count, n+1)
		}
		// Seek lands on the next key when the exact one is absent.
		k, v := c.Seek(U64(21))
		if !bytes.Equal(k, Key(U64(22), []byte("k"))) || string(v) != "11" {
			return fmt.Errorf("Seek(21) = %x %q, want key 22 (value 11)", k, v)
		}
		if k, _ := c.Prev(); !bytes.Equal(k, Key(U64(20), []byte("k"))) {
			return fmt.Errorf("Prev after Seek = %x, want key 20", k)
		}
		if k, _ := c.Seek([]byte{0xff, 0}); k != nil {
			return fmt.Errorf("Seek past the end = %x, want nil", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCursorSeesOwnWrites(t *testing.T) { pgtest.EachStore(t, testCursorSeesOwnWrites) }

// Deleting behind the cursor and inserting ahead of it in the same
// transaction: the walk sees the insert and not the deleted keys.
func testCursorSeesOwnWrites(t *testing.T) {
	st := open(t, t.TempDir())
	var seen []string
	err := st.Update(func(tx Tx) error {
		b := tx.Bucket([]byte(BucketOutbox))
		for _, k := range []string{"a", "c", "e"} {
			if err := b.Put([]byte(k), []byte(k)); err != nil {
				return err
			}
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			seen = append(seen, string(k))
			if string(k) == "a" {
				if err := b.Put([]byte("b"), []byte("b")); err != nil {
					return err
				}
				if err := b.Delete([]byte("c")); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[a b e]" {
		t.Fatalf("walk saw %v, want [a b e]", seen)
	}
}

func TestFailedUpdateLeavesNothing(t *testing.T) { pgtest.EachStore(t, testFailedUpdateLeavesNothing) }

func testFailedUpdateLeavesNothing(t *testing.T) {
	st := open(t, t.TempDir())
	boom := fmt.Errorf("boom")
	err := st.Update(func(tx Tx) error {
		if err := tx.Bucket([]byte(BucketMeta)).Put([]byte("x"), []byte("1")); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	_ = st.View(func(tx Tx) error {
		if v := tx.Bucket([]byte(BucketMeta)).Get([]byte("x")); v != nil {
			t.Fatalf("a failed update left x=%q", v)
		}
		if err := tx.Bucket([]byte(BucketMeta)).Put([]byte("y"), []byte("1")); err == nil {
			t.Fatal("Put in a view succeeded")
		}
		return nil
	})
}

func TestCountersNeverRepeatAcrossHandles(t *testing.T) {
	pgtest.EachStore(t, testCountersNeverRepeatAcrossHandles)
}

// Two handles on one store (two servers on one PostgreSQL database; on
// bbolt two Stores of one process sharing its handle) drawing from one
// counter at once never get the same number.
func testCountersNeverRepeatAcrossHandles(t *testing.T) {
	dir := t.TempDir()
	handles := []*Store{open(t, dir), open(t, dir)}
	var mu sync.Mutex
	got := map[uint64]bool{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n uint64
			err := handles[i%2].Update(func(tx Tx) error {
				var err error
				n, err = NextSeq(tx, "test")
				return err
			})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if got[n] {
				t.Errorf("number %d drawn twice", n)
			}
			got[n] = true
		}()
	}
	wg.Wait()
	if len(got) != 40 {
		t.Fatalf("%d distinct numbers, want 40", len(got))
	}
}

func TestOpenForRefusesUnknownSetting(t *testing.T) {
	if _, err := OpenFor(t.TempDir(), "mysql://db"); err == nil {
		t.Fatal("OpenFor accepted mysql://")
	}
}

// A server stuck inside a write holds every other writer back; after the
// lock timeout they get ERR_UNAVAILABLE instead of waiting for ever.
func TestPostgresWriterLockWaitIsBounded(t *testing.T) {
	dsn := pgtest.DSN(t)
	stuck, err := OpenPostgres(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stuck.Close)
	waiter, err := OpenPostgres(dsn, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(waiter.Close)
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- stuck.Update(func(Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	// It gives up with an error rather than waiting for ever (a hang fails
	// at answers' liveness bound; the time it took is not asserted).
	err = answers(t, func() error {
		return waiter.Update(func(tx Tx) error { return tx.Bucket([]byte(BucketMeta)).Put([]byte("x"), []byte("1")) })
	})
	close(release)
	if e, ok := errs.As(err); !ok || e.Code != errs.Unavailable {
		t.Fatalf("write while another server holds the lock: %v, want ERR_UNAVAILABLE", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := waiter.Update(func(tx Tx) error { return tx.Bucket([]byte(BucketMeta)).Put([]byte("x"), []byte("1")) }); err != nil {
		t.Fatalf("write after the holder finished: %v", err)
	}
}

// answers runs f and returns its error, failing the test if f has not
// returned within a generous liveness bound: a limit must answer, never hang.
func answers(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("no answer within 60 s: the call hangs instead of giving up")
		return nil
	}
}
