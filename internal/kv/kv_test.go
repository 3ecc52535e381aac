package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// runner is one backend's Update and View.
type runner struct {
	update, view func(fn func(Tx) error) error
}

func backends(t *testing.T, fn func(t *testing.T, r runner)) {
	t.Run("bbolt", func(t *testing.T) {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "kv.db"), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		if err := db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucket([]byte("c")); err != nil {
				return err
			}
			_, err := tx.CreateBucket([]byte("b"))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		fn(t, runner{
			update: func(f func(Tx) error) error { return db.Update(func(tx *bolt.Tx) error { return f(Bolt(tx)) }) },
			view:   func(f func(Tx) error) error { return db.View(func(tx *bolt.Tx) error { return f(Bolt(tx)) }) },
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := newTestPG(t)
		fn(t, runner{update: pg.Update, view: pg.View})
	})
}

func newTestPG(t *testing.T) *PG {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, TableSQL("test_kv")); err != nil {
		t.Fatal(err)
	}
	pg, err := NewPG(pool, PGConfig{Area: "test", Table: "test_kv", Lock: 42, Where: pgmigrate.Redact(dsn)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	return pg
}

// Count, Clear and a cursor's Delete behave alike on both backends, and
// only an update is writable.
func TestCountClearAndCursorDelete(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, r runner) {
		name := []byte("b")
		if err := r.update(func(tx Tx) error {
			if !tx.Writable() {
				return fmt.Errorf("an update is not writable")
			}
			b := tx.Bucket(name)
			for i := 0; i < 200; i++ {
				if err := b.Put([]byte(fmt.Sprintf("k%03d", i)), []byte("v")); err != nil {
					return err
				}
			}
			// Delete every even key through a cursor walking forward.
			c := b.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				if (k[3]-'0')%2 == 0 {
					if err := c.Delete(); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.view(func(tx Tx) error {
			if tx.Writable() {
				return fmt.Errorf("a view is writable")
			}
			if n := tx.Bucket(name).Count(); n != 100 {
				return fmt.Errorf("count after cursor deletes = %d, want 100", n)
			}
			if v := tx.Bucket(name).Get([]byte("k002")); v != nil {
				return fmt.Errorf("deleted key k002 still reads %q", v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.update(func(tx Tx) error {
			if err := tx.Clear(name); err != nil {
				return err
			}
			return tx.Bucket(name).Put([]byte("after"), []byte("x"))
		}); err != nil {
			t.Fatal(err)
		}
		if err := r.view(func(tx Tx) error {
			b := tx.Bucket(name)
			if n := b.Count(); n != 1 {
				return fmt.Errorf("count after clear and one put = %d, want 1", n)
			}
			if k, _ := b.Cursor().First(); string(k) != "after" {
				return fmt.Errorf("first key after clear = %q", k)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// PostgreSQL sends a transaction's writes in batches, before the next read
// and at commit: every read still sees the writes made before it, a buffer
// the caller reuses after Put does not change what was written, an empty
// value stays empty (not absent), and a failed update leaves nothing.
func TestReadsSeeEarlierWritesOfTheirTransaction(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, r runner) {
		err := r.update(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			buf := []byte("k1")
			if err := b.Put(buf, []byte("v1")); err != nil {
				return err
			}
			copy(buf, "zz")
			if err := b.Put([]byte("k2"), []byte{}); err != nil {
				return err
			}
			if got := b.Get([]byte("k1")); string(got) != "v1" {
				return fmt.Errorf("get after put: %q", got)
			}
			if got := b.Get([]byte("k2")); got == nil || len(got) != 0 {
				return fmt.Errorf("empty value read back as %v", got)
			}
			if err := b.Delete([]byte("k1")); err != nil {
				return err
			}
			if n := b.Count(); n != 1 {
				return fmt.Errorf("count after delete: %d", n)
			}
			for i := range 100 {
				if err := b.Put([]byte(fmt.Sprintf("m%03d", i)), []byte("x")); err != nil {
					return err
				}
			}
			k, _ := b.Cursor().Seek([]byte("m050"))
			if string(k) != "m050" {
				return fmt.Errorf("cursor after 100 puts: %q", k)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.update(func(tx Tx) error {
			if err := tx.Bucket([]byte("b")).Put([]byte("lost"), []byte("x")); err != nil {
				return err
			}
			return fmt.Errorf("refused")
		}); err == nil {
			t.Fatal("the failing update committed")
		}
		if err := r.view(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			if b.Get([]byte("zz")) != nil || b.Get([]byte("k1")) != nil || b.Get([]byte("lost")) != nil {
				return fmt.Errorf("stray keys")
			}
			if n := b.Count(); n != 101 {
				return fmt.Errorf("count %d, want 101", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// PostgreSQL keeps a transaction's keys in memory and sends only their
// last state: a key put, deleted and put again across range reads (which
// send what is pending), a key deleted after it was read, and a bucket
// cleared between writes all end as they do on bbolt.
func TestLastWriteOfAKeyWins(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, r runner) {
		err := r.update(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			for i := range 5 {
				if err := b.Put([]byte("k"), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
				if i == 2 {
					if err := b.Delete([]byte("k")); err != nil {
						return err
					}
					if n := b.Count(); n != 0 {
						return fmt.Errorf("count after delete: %d", n)
					}
				}
			}
			if err := b.Put([]byte("gone"), []byte("x")); err != nil {
				return err
			}
			if got := b.Get([]byte("gone")); string(got) != "x" {
				return fmt.Errorf("get gone: %q", got)
			}
			return b.Delete([]byte("gone"))
		})
		if err != nil {
			t.Fatal(err)
		}
		err = r.update(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			if got := b.Get([]byte("k")); string(got) != "4" {
				return fmt.Errorf("k after commit: %q", got)
			}
			if err := b.Put([]byte("before"), []byte("x")); err != nil {
				return err
			}
			if err := tx.Clear([]byte("b")); err != nil {
				return err
			}
			b = tx.Bucket([]byte("b"))
			if got := b.Get([]byte("k")); got != nil {
				return fmt.Errorf("k after clear: %q", got)
			}
			return b.Put([]byte("after"), []byte("y"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.view(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			var keys []string
			if err := b.ForEach(func(k, _ []byte) error { keys = append(keys, string(k)); return nil }); err != nil {
				return err
			}
			if fmt.Sprint(keys) != "[after]" {
				return fmt.Errorf("keys %v, want [after]", keys)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// A range read sends only its own bucket's pending changes: the other
// bucket's keys, written before and after it, still commit in their last
// state, and the range read sees every change of its own bucket.
func TestRangeReadOfOneBucketKeepsTheOthersPending(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, r runner) {
		err := r.update(func(tx Tx) error {
			b, c := tx.Bucket([]byte("b")), tx.Bucket([]byte("c"))
			if err := b.Put([]byte("k"), []byte("1")); err != nil {
				return err
			}
			if err := c.Put([]byte("x"), []byte("1")); err != nil {
				return err
			}
			if n := c.Count(); n != 1 {
				return fmt.Errorf("count of c: %d", n)
			}
			if err := b.Put([]byte("k"), []byte("2")); err != nil {
				return err
			}
			if err := c.Delete([]byte("x")); err != nil {
				return err
			}
			if k, _ := c.Cursor().First(); k != nil {
				return fmt.Errorf("c's first key after its delete: %q", k)
			}
			if k, v := b.Cursor().First(); string(k) != "k" || string(v) != "2" {
				return fmt.Errorf("b's first pair: %q=%q", k, v)
			}
			return b.Put([]byte("k"), []byte("3"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.view(func(tx Tx) error {
			if got := tx.Bucket([]byte("b")).Get([]byte("k")); string(got) != "3" {
				return fmt.Errorf("k = %q, want 3", got)
			}
			if n := tx.Bucket([]byte("c")).Count(); n != 0 {
				return fmt.Errorf("c holds %d keys", n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// A view's BEGIN travels with its first read, and the snapshot is taken
// there: an update committed after that read stays unseen by the view's
// later reads, whether the first read was a point read or a range read.
func TestViewSnapshotStartsAtItsFirstRead(t *testing.T) {
	t.Parallel()
	pg := newTestPG(t)
	put := func(k, v string) {
		if err := pg.Update(func(tx Tx) error { return tx.Bucket([]byte("b")).Put([]byte(k), []byte(v)) }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "1")
	for i, first := range []func(b Bucket) bool{
		func(b Bucket) bool { return string(b.Get([]byte("a"))) == "1" },
		func(b Bucket) bool { k, _ := b.Cursor().First(); return string(k) == "a" },
	} {
		late := fmt.Sprintf("late%d", i)
		err := pg.View(func(tx Tx) error {
			b := tx.Bucket([]byte("b"))
			if !first(b) {
				return fmt.Errorf("first read %d did not see a", i)
			}
			put(late, "x")
			if got := b.Get([]byte(late)); got != nil {
				return fmt.Errorf("view %d sees %s, committed after its first read", i, late)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := pg.View(func(Tx) error { return nil }); err != nil {
		t.Fatalf("a view that reads nothing: %v", err)
	}
}

// A peek that reads once runs once, outside any transaction; one that
// reads twice, or asks for the SQL connection, runs again as a view and
// answers from that run.
func TestPeekRunsAgainAsAViewWhenItReadsTwice(t *testing.T) {
	t.Parallel()
	pg := newTestPG(t)
	if err := pg.Update(func(tx Tx) error {
		b := tx.Bucket([]byte("b"))
		if err := b.Put([]byte("a"), []byte("1")); err != nil {
			return err
		}
		return b.Put([]byte("b"), []byte("2"))
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		runs int
		fn   func(tx Tx) string
	}{
		{"one read", 1, func(tx Tx) string { return string(tx.Bucket([]byte("b")).Get([]byte("a"))) }},
		{"two reads", 2, func(tx Tx) string {
			b := tx.Bucket([]byte("b"))
			return string(b.Get([]byte("a"))) + string(b.Get([]byte("b")))
		}},
		{"a read and the connection", 2, func(tx Tx) string {
			v := string(tx.Bucket([]byte("b")).Get([]byte("a")))
			if _, conn, err := tx.SQL(); err != nil || conn == nil {
				return "no connection"
			}
			return v
		}},
	} {
		runs, got := 0, ""
		err := pg.Peek(func(tx Tx) error {
			runs++
			got = c.fn(tx)
			return nil
		})
		want := map[int]string{1: "1", 2: "12"}[c.runs]
		if c.name == "a read and the connection" {
			want = "1"
		}
		if err != nil || runs != c.runs || got != want {
			t.Errorf("%s: err %v, %d runs, answer %q; want %d runs answering %q", c.name, err, runs, got, c.runs, want)
		}
	}
}

// An update waits for the area's lock at most LockTimeout, then fails with
// ERR_UNAVAILABLE saying so; once the lock is free the next update runs on
// the same pool.
func TestUpdateGivesUpOnAHeldLock(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, TableSQL("test_kv")); err != nil {
		t.Fatal(err)
	}
	pg, err := NewPG(pool, PGConfig{Area: "test", Table: "test_kv", Lock: 42, Where: "test", LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	holder, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock(42)"); err != nil {
		t.Fatal(err)
	}
	put := func(tx Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v")) }
	err = pg.Update(put)
	if e, ok := errs.As(err); !ok || e.Code != errs.Unavailable || !strings.Contains(e.Message, "stayed locked") {
		t.Fatalf("update under a held lock: %v", err)
	}
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock(42)"); err != nil {
		t.Fatal(err)
	}
	holder.Release()
	if err := pg.Update(put); err != nil {
		t.Fatalf("update after the lock was freed: %v", err)
	}
}
