package store

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// A bbolt handle of this test opened directly on the file stands in for
// another cairn process: flock locks belong to an open file, so it shuts the
// store out exactly as another process's handle would.
func otherProcess(t *testing.T, path string, within time.Duration) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: within})
	if err != nil {
		t.Fatalf("the other process could not open %s within %s: %v", path, within, err)
	}
	return db
}

func put(tx Tx, k, v string) error { return tx.Bucket([]byte(BucketMeta)).Put([]byte(k), []byte(v)) }

// A store left idle lets another process in; its next operation waits for
// that process to finish and then sees what it wrote.
func TestBoltIdleStoreLetsAnotherProcessIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	st, err := Open(path, Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if err := st.Update(func(tx Tx) error { return put(tx, "mine", "1") }); err != nil {
		t.Fatal(err)
	}
	other := otherProcess(t, path, time.Minute)
	if err := other.Update(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte(BucketMeta)).Get([]byte("mine")); string(v) != "1" {
			t.Errorf("the other process reads mine=%q, want 1", v)
		}
		return tx.Bucket([]byte(BucketMeta)).Put([]byte("theirs"), []byte("2"))
	}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		var v string
		err := st.View(func(tx Tx) error { v = string(tx.Bucket([]byte(BucketMeta)).Get([]byte("theirs"))); return nil })
		if err != nil {
			v = err.Error()
		}
		got <- v
	}()
	select {
	case v := <-got:
		t.Fatalf("read %q while the other process held the file", v)
	case <-time.After(300 * time.Millisecond):
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "2" {
		t.Fatalf("after the other process finished: theirs=%q, want 2", v)
	}
}

// A file another process keeps: Open fails with ERR_INIT_FAILED and an
// operation with ERR_UNAVAILABLE, both naming the file and what to do,
// after the lock timeout rather than never.
func TestBoltLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	other := otherProcess(t, path, time.Second)
	const wait = 200 * time.Millisecond
	err := answers(t, func() error { _, err := Open(path, Options{LockTimeout: wait}); return err })
	wantLocked(t, err, 500, errs.InitFailed, path)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := Open(path, Options{LockTimeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	other = otherProcess(t, path, time.Minute)
	err = st.Update(func(tx Tx) error { return put(tx, "x", "1") })
	wantLocked(t, err, 503, errs.Unavailable, path)
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(tx Tx) error { return put(tx, "x", "1") }); err != nil {
		t.Fatalf("write after the other process finished: %v", err)
	}
}

func wantLocked(t *testing.T, err error, status int, code, path string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Status != status || e.Code != code || !strings.Contains(e.Message, path) || !strings.Contains(e.Message, "locked by another cairn process; stop it") {
		t.Fatalf("got %v, want %d %s naming %s and saying it is locked by another cairn process", err, status, code, path)
	}
}

// Stores of one process on one file share the handle: both work at once,
// closing one leaves the other working, and closing the last releases the
// file at once.
func TestBoltStoresOfOneProcessShareTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	a, err := Open(path, Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(filepath.Join(dir, ".", FileName), Options{LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("second Store on the file: %v", err)
	}
	if err := a.Update(func(tx Tx) error {
		return b.View(func(tx Tx) error { return nil }) // a read beside a running write
	}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close() // closing twice is harmless
	if err := a.View(func(Tx) error { return nil }); err == nil {
		t.Fatal("a closed Store still reads")
	}
	if err := b.Update(func(tx Tx) error { return put(tx, "x", "1") }); err != nil {
		t.Fatalf("the other Store after one closed: %v", err)
	}
	b.Close()
	if err := otherProcess(t, path, 10*time.Millisecond).Close(); err != nil {
		t.Fatal(err)
	}
}

// childEnv names the store file a re-executed test binary draws from.
const childEnv = "CAIRN_ADMIN_STORE_CHILD"

// Two real processes on one file, each drawing from one counter with
// concurrent goroutines, never get the same number: each takes the file
// in turn while the other waits.
func TestBoltCountersNeverRepeatAcrossProcesses(t *testing.T) {
	const each = 20
	if path := os.Getenv(childEnv); path != "" {
		for _, n := range draw(t, path, each) {
			fmt.Println(n)
		}
		return
	}
	path := filepath.Join(t.TempDir(), FileName)
	first, err := Open(path, Options{}) // the file exists before both start
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	child := exec.Command(os.Args[0], "-test.run=^TestBoltCountersNeverRepeatAcrossProcesses$", "-test.count=1")
	child.Env = append(os.Environ(), childEnv+"="+path)
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	mine := draw(t, path, each)
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	seen := map[uint64]bool{}
	for _, n := range mine {
		seen[n] = true
	}
	theirs := 0
	for _, line := range strings.Fields(out.String()) {
		n, err := strconv.ParseUint(line, 10, 64)
		if err != nil {
			continue // the test binary's own PASS line
		}
		if seen[n] {
			t.Errorf("number %d drawn by both processes", n)
		}
		seen[n] = true
		theirs++
	}
	if theirs != each || len(seen) != 2*each {
		t.Fatalf("child drew %d numbers, %d distinct in all; want %d and %d\n%s", theirs, len(seen), each, 2*each, out.String())
	}
}

func draw(t *testing.T, path string, n int) []uint64 {
	t.Helper()
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := st.Update(func(tx Tx) error {
				var err error
				got[i], err = NextSeq(tx, "test")
				return err
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	return got
}
