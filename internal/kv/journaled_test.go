package kv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

var modelBuckets = []string{"a", "b", "c"}

func openBoltFile(t testing.TB, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range modelBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

func openModel(t testing.TB, dir string) (*bolt.DB, *Journaled) {
	t.Helper()
	path := filepath.Join(dir, "j.db")
	db := openBoltFile(t, path)
	j, err := OpenJournaled(db, path)
	if err != nil {
		t.Fatal(err)
	}
	return db, j
}

// dump is every pair of every model bucket, walked forward and backward
// with a cursor, and read back key by key.
func dump(t testing.TB, tx Tx) string {
	t.Helper()
	var out bytes.Buffer
	for _, name := range modelBuckets {
		b := tx.Bucket([]byte(name))
		c := b.Cursor()
		var fwd [][2][]byte
		for k, v := c.First(); k != nil; k, v = c.Next() {
			fwd = append(fwd, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		}
		i := len(fwd)
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			i--
			if i < 0 || !bytes.Equal(k, fwd[i][0]) || !bytes.Equal(v, fwd[i][1]) {
				t.Fatalf("bucket %s: backward walk disagrees with forward at %d (%q)", name, i, k)
			}
		}
		if i != 0 {
			t.Fatalf("bucket %s: backward walk is %d pairs short", name, i)
		}
		if n := b.Count(); n != len(fwd) {
			t.Fatalf("bucket %s: Count %d, walked %d", name, n, len(fwd))
		}
		for _, p := range fwd {
			if got := b.Get(p[0]); !bytes.Equal(got, p[1]) || got == nil {
				t.Fatalf("bucket %s: Get(%q) = %q, walked %q", name, p[0], got, p[1])
			}
			fmt.Fprintf(&out, "%s %q=%q\n", name, p[0], p[1])
		}
	}
	return out.String()
}

// randomOps applies the same random changes and cursor moves to a and b,
// failing on the first read that differs.
func randomOps(t *testing.T, r *rand.Rand, a, b Tx) {
	t.Helper()
	key := func() []byte { return fmt.Appendf(nil, "k%02d", r.IntN(40)) }
	for range 1 + r.IntN(20) {
		name := []byte(modelBuckets[r.IntN(len(modelBuckets))])
		ba, bb := a.Bucket(name), b.Bucket(name)
		switch op := r.IntN(20); {
		case op < 8:
			k := key()
			v := fmt.Appendf(nil, "v%d", r.IntN(1000))
			if r.IntN(10) == 0 {
				v = []byte{}
			}
			if err := errors.Join(ba.Put(k, v), bb.Put(k, v)); err != nil {
				t.Fatal(err)
			}
		case op < 12:
			k := key()
			if err := errors.Join(ba.Delete(k), bb.Delete(k)); err != nil {
				t.Fatal(err)
			}
		case op < 13:
			if r.IntN(4) == 0 { // clears are rarer than the rest
				if err := errors.Join(a.Clear(name), b.Clear(name)); err != nil {
					t.Fatal(err)
				}
				// A bucket taken before a clear is not used after it.
				ba, bb = a.Bucket(name), b.Bucket(name)
			}
		default:
			// A walk that moves both ways, seeks, and deletes under the
			// cursor now and then.
			ca, cb := ba.Cursor(), bb.Cursor()
			var ka, va, kb, vb []byte
		walk:
			for range 1 + r.IntN(12) {
				m := r.IntN(7)
				switch m {
				case 0:
					ka, va = ca.First()
					kb, vb = cb.First()
				case 1:
					ka, va = ca.Last()
					kb, vb = cb.Last()
				case 2:
					s := key()
					ka, va = ca.Seek(s)
					kb, vb = cb.Seek(s)
				case 3, 4:
					if ka == nil {
						continue
					}
					ka, va = ca.Next()
					kb, vb = cb.Next()
				case 5:
					if ka == nil {
						continue
					}
					ka, va = ca.Prev()
					kb, vb = cb.Prev()
				case 6:
					if ka == nil || !a.Writable() {
						continue
					}
					if err := errors.Join(ca.Delete(), cb.Delete()); err != nil {
						t.Fatal(err)
					}
					// bbolt's own cursor may skip a pair or find the
					// deleted one again after a delete, so callers start
					// over with First: that is the move compared, and the
					// walk ends.
					ka, va = ca.First()
					kb, vb = cb.First()
					if !bytes.Equal(ka, kb) || !bytes.Equal(va, vb) {
						t.Fatalf("bucket %s, first after a delete: journaled %q=%q, bbolt %q=%q", name, ka, va, kb, vb)
					}
					break walk
				}
				if !bytes.Equal(ka, kb) || !bytes.Equal(va, vb) {
					t.Fatalf("bucket %s, move %d: journaled %q=%q, bbolt %q=%q", name, m, ka, va, kb, vb)
				}
			}
		}
		k := key()
		if ga, gb := ba.Get(k), bb.Get(k); !bytes.Equal(ga, gb) || (ga == nil) != (gb == nil) {
			t.Fatalf("bucket %s: Get(%q) journaled %q, bbolt %q", name, k, ga, gb)
		}
	}
}

// TestJournaledMatchesBolt runs the same random transactions on a
// journaled store and on a plain bbolt file, checkpointing at random
// moments and reopening the journaled one now and then (with and without
// a Close, as after a crash), and compares what every transaction reads.
func TestJournaledMatchesBolt(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			dir := t.TempDir()
			ref := openBoltFile(t, filepath.Join(dir, "ref.db"))
			defer ref.Close()
			db, j := openModel(t, dir)
			j.CheckpointRecords = 1 + r.IntN(8)
			j.QuietCheckpoint = 0
			for i := range 300 {
				fail := r.IntN(10) == 0
				errFail := errors.New("fail")
				update := j.Update
				if r.IntN(8) == 0 {
					update = j.UpdateFile // past the journal, as an import's batch
				}
				err := update(func(a Tx) error {
					return ref.Update(func(btx *bolt.Tx) error {
						randomOps(t, r, a, Bolt(btx))
						if fail {
							return errFail
						}
						return nil
					})
				})
				if fail != errors.Is(err, errFail) || (!fail && err != nil) {
					t.Fatalf("update %d: %v", i, err)
				}
				var want string
				_ = ref.View(func(btx *bolt.Tx) error { want = dump(t, Bolt(btx)); return nil })
				if err := j.View(func(a Tx) error {
					if got := dump(t, a); got != want {
						t.Fatalf("after update %d the journaled store reads\n%s\nbbolt\n%s", i, got, want)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				switch r.IntN(40) {
				case 0:
					if err := j.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				case 1: // a clean stop
					if err := j.Close(); err != nil {
						t.Fatal(err)
					}
					_ = db.Close()
					db, j = openModel(t, dir)
					j.QuietCheckpoint = 0
				case 2: // a crash: the file and journal as they are
					j.writeMu.Lock()
					j.waitCheckpoint()
					j.closed = true
					j.closeSegments()
					j.writeMu.Unlock()
					_ = db.Close()
					db, j = openModel(t, dir)
					j.QuietCheckpoint = 0
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
		})
	}
}

// TestJournalRecordsSurviveACrash commits through the journal, stops
// without a checkpoint, and finds every acknowledged commit after the
// next open, from the journal alone: the file never had them.
func TestJournalRecordsSurviveACrash(t *testing.T) {
	dir := t.TempDir()
	db, j := openModel(t, dir)
	j.CheckpointRecords, j.QuietCheckpoint = 1000, 0
	for i := range 50 {
		if err := j.Update(func(tx Tx) error {
			return tx.Bucket([]byte("a")).Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if j.Checkpoints() != 0 {
		t.Fatalf("%d checkpoints ran; the test wants the commits in the journal only", j.Checkpoints())
	}
	// The file itself has none of them.
	_ = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("a")).Stats().KeyN; n != 0 {
			t.Fatalf("the file holds %d keys before any checkpoint", n)
		}
		return nil
	})
	j.closeSegments() // a crash: no Close
	_ = db.Close()
	db, j = openModel(t, dir)
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("a")).Stats().KeyN; n != 50 {
			t.Fatalf("after the replay the file holds %d keys, want 50", n)
		}
		return nil
	})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestJournalTornTailIsNotReplayed cuts the last record short, as a crash
// mid-write leaves it: the records before it replay, it does not.
func TestJournalTornTailIsNotReplayed(t *testing.T) {
	dir := t.TempDir()
	db, j := openModel(t, dir)
	j.CheckpointRecords, j.QuietCheckpoint = 1000, 0
	for i := range 3 {
		if err := j.Update(func(tx Tx) error {
			return tx.Bucket([]byte("a")).Put(fmt.Appendf(nil, "k%d", i), bytes.Repeat([]byte("v"), 100))
		}); err != nil {
			t.Fatal(err)
		}
	}
	seg := j.segs[j.cur]
	end := seg.off
	j.closeSegments()
	_ = db.Close()
	// Tear the third record: zero its last bytes.
	f, err := os.OpenFile(segmentPath(filepath.Join(dir, "j.db"), 0), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 20), end-20); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	db, j = openModel(t, dir)
	defer db.Close()
	defer j.Close()
	_ = j.View(func(tx Tx) error {
		b := tx.Bucket([]byte("a"))
		if b.Get([]byte("k0")) == nil || b.Get([]byte("k1")) == nil || b.Get([]byte("k2")) != nil {
			t.Fatalf("after a torn third record: k0 %q k1 %q k2 %q; want the first two only", b.Get([]byte("k0")), b.Get([]byte("k1")), b.Get([]byte("k2")))
		}
		return nil
	})
}

// TestJournalOfAnotherFileIsNotReplayed puts an older copy of the file in
// place (a restore by hand): the journal, which follows a checkpoint that
// copy does not have, is left out and said so.
func TestJournalOfAnotherFileIsNotReplayed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.db")
	db, j := openModel(t, dir)
	j.QuietCheckpoint = 0
	put := func(k string) {
		if err := j.Update(func(tx Tx) error { return tx.Bucket([]byte("a")).Put([]byte(k), []byte("v")) }); err != nil {
			t.Fatal(err)
		}
	}
	put("before")
	if err := j.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		put(fmt.Sprint("after", i))
		if err := j.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	put("journal-only")
	j.closeSegments()
	_ = db.Close()
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	db, j = openModel(t, dir)
	defer db.Close()
	defer j.Close()
	if len(j.Skipped) == 0 {
		t.Fatal("the journal of a later checkpoint was replayed into an older file without a word")
	}
	_ = j.View(func(tx Tx) error {
		if tx.Bucket([]byte("a")).Get([]byte("journal-only")) != nil {
			t.Fatal("a record that follows a checkpoint the file lacks was applied")
		}
		return nil
	})
	// The left-out records are kept aside, and the numbers handed out
	// next cannot meet them in a later replay.
	aside, _ := filepath.Glob(path + "-journal-*.unreplayed-*")
	if len(aside) == 0 {
		t.Fatal("the left-out journal was not kept aside")
	}
	for i := range 3 {
		put(fmt.Sprint("new", i))
	}
	j.closeSegments()
	_ = db.Close()
	db, j = openModel(t, dir)
	if len(j.Skipped) != 0 {
		t.Fatalf("a replay after the fresh commits left out %v", j.Skipped)
	}
	_ = j.View(func(tx Tx) error {
		for i := range 3 {
			if tx.Bucket([]byte("a")).Get(fmt.Appendf(nil, "new%d", i)) == nil {
				t.Fatalf("commit new%d lost", i)
			}
		}
		return nil
	})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
}

// TestJournaledReadersSeeWholeCommits runs readers beside a writer whose
// every commit moves one unit between two keys, across checkpoints: every
// snapshot must hold the same total.
func TestJournaledReadersSeeWholeCommits(t *testing.T) {
	db, j := openModel(t, t.TempDir())
	defer db.Close()
	j.CheckpointRecords, j.QuietCheckpoint = 3, 0
	u64 := func(n uint64) []byte { return fmt.Appendf(nil, "%020d", n) }
	num := func(p []byte) (n uint64) { _, _ = fmt.Sscanf(string(p), "%d", &n); return n }
	if err := j.Update(func(tx Tx) error {
		b := tx.Bucket([]byte("a"))
		return errors.Join(b.Put([]byte("x"), u64(1000)), b.Put([]byte("y"), u64(0)))
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	bad := make(chan string, 1)
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = j.View(func(tx Tx) error {
					b := tx.Bucket([]byte("a"))
					if s := num(b.Get([]byte("x"))) + num(b.Get([]byte("y"))); s != 1000 {
						select {
						case bad <- fmt.Sprintf("a snapshot read x+y = %d", s):
						default:
						}
					}
					return nil
				})
			}
		})
	}
	for i := range 500 {
		update := j.Update
		if i%25 == 0 {
			update = j.UpdateFile
		}
		if err := update(func(tx Tx) error {
			b := tx.Bucket([]byte("a"))
			return errors.Join(b.Put([]byte("x"), u64(num(b.Get([]byte("x")))-1)), b.Put([]byte("y"), u64(num(b.Get([]byte("y")))+1)))
		}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case msg := <-bad:
		t.Fatal(msg)
	default:
	}
	if j.Checkpoints() < 5 {
		t.Fatalf("only %d checkpoints ran beside the readers", j.Checkpoints())
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
