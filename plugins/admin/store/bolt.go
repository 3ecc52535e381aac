package store

// The bbolt backend. bbolt holds an exclusive file lock for as long as a
// database is open, so a long-lived handle in the plugin process would lock
// the operator CLI and the host out. Instead every operation opens the
// file, runs exactly one transaction and closes it again. Opens are
// serialized by a lock file next to the database that is polled at a fine
// grain (bbolt's own lock wait sleeps 50 ms between attempts): read-only
// operations take it shared and open bbolt read-only, writes take it
// exclusively. Within one process a sync.RWMutex orders goroutines first,
// because flock locks belong to an open file description and would
// otherwise make goroutines of the same process wait on each other through
// the kernel. Commits are durable (bbolt fsyncs every commit; NoSync is
// never set).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultLockTimeout bounds how long one operation waits for another
// process's transaction. Transactions are short, so a longer wait means a
// process is stuck and the caller deserves an error.
const DefaultLockTimeout = 5 * time.Second

// Options tune Open.
type Options struct {
	// LockTimeout bounds the wait for another process's transaction; 0
	// means DefaultLockTimeout.
	LockTimeout time.Duration
}

// boltBackend keeps no file open between operations.
type boltBackend struct {
	path    string
	lock    string
	timeout time.Duration

	mu sync.RWMutex
}

// Open prepares the bbolt store at path (creating the file and its
// buckets) and returns it. Failures are ERR_INIT_FAILED errors saying what
// to do.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cannot create the admin data dir %s: %v", filepath.Dir(path), err)
	}
	b := &boltBackend{path: path, lock: path + ".lock", timeout: opts.LockTimeout}
	err := b.rawUpdate(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte(BucketMeta))
		if v := meta.Get([]byte("schema_version")); len(v) == 8 {
			if got := binary.BigEndian.Uint64(v); got > SchemaVersion {
				return fmt.Errorf("admin store %s has schema version %d, newer than this cairn understands (%d): upgrade cairn", path, got, SchemaVersion)
			}
			return nil
		}
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], SchemaVersion)
		return meta.Put([]byte("schema_version"), v[:])
	})
	if err != nil {
		if e, ok := errs.As(err); ok {
			return nil, errs.Newf(500, errs.InitFailed, "admin store %s: %s", path, e.Message)
		}
		return nil, errs.Newf(500, errs.InitFailed, "admin store %s: %v (check the file's permissions, or move a damaged file aside)", path, err)
	}
	return &Store{b: b}, nil
}

func (b *boltBackend) describe() Description {
	return Description{Kind: "bbolt", Location: b.path, SchemaVersion: SchemaVersion}
}

func (b *boltBackend) close() {}

func (b *boltBackend) update(fn func(tx Tx) error) error {
	return b.rawUpdate(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

func (b *boltBackend) view(fn func(tx Tx) error) error {
	return b.rawView(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// rawUpdate runs fn in one write transaction on a freshly opened database.
func (b *boltBackend) rawUpdate(fn func(tx *bolt.Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	unlock, err := b.flock(true)
	if err != nil {
		return err
	}
	defer unlock()
	db, err := bolt.Open(b.path, 0o600, &bolt.Options{Timeout: b.timeout})
	if err != nil {
		return fmt.Errorf("open %s: %w", b.path, err)
	}
	txErr := db.Update(fn)
	if cerr := db.Close(); cerr != nil && txErr == nil {
		txErr = cerr
	}
	return txErr
}

// rawView runs fn in one read-only transaction.
func (b *boltBackend) rawView(fn func(tx *bolt.Tx) error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	unlock, err := b.flock(false)
	if err != nil {
		return err
	}
	defer unlock()
	db, err := bolt.Open(b.path, 0o600, &bolt.Options{Timeout: b.timeout, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open %s: %w", b.path, err)
	}
	txErr := db.View(fn)
	if cerr := db.Close(); cerr != nil && txErr == nil {
		txErr = cerr
	}
	return txErr
}

// flock takes the cross-process lock, polling with a short, growing
// interval so a waiting process gets in soon after the holder finishes.
func (b *boltBackend) flock(exclusive bool) (func(), error) {
	f, err := os.OpenFile(b.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", b.lock, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(b.timeout)
	wait := 100 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", b.lock, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, errs.Newf(503, errs.Unavailable, "the admin store %s stayed locked by another process for %s; retry, or look for a stuck cairn process", b.path, b.timeout)
		}
		time.Sleep(wait)
		if wait < 5*time.Millisecond {
			wait *= 2
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// boltTx and boltBucket present bbolt's transaction through Tx; bbolt's
// cursor already has Cursor's methods.
type boltTx struct{ tx *bolt.Tx }

func (t boltTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

type boltBucket struct{ *bolt.Bucket }

func (b boltBucket) Cursor() Cursor { return b.Bucket.Cursor() }
