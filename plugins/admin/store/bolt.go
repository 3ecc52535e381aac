package store

// The bbolt backend. A process keeps admin.db open while it works and runs
// each operation as one transaction on that handle; commits are durable
// (bbolt fsyncs every commit; NoSync is never set). bbolt holds an
// exclusive flock on the file for as long as it is open, and one other
// cairn process can need the file while a server runs: a `cairn admin …`
// command beside a server that does not answer commands (`serve --http`,
// `--no-daemon`) starts an admin area of its own. So a handle nobody used
// for idleRelease is closed, and the next operation opens the file again,
// waiting up to the lock timeout (bbolt's own flock wait) for the other
// process. All Stores of one process on one file share one handle: flock
// would otherwise make them shut each other out.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultLockTimeout bounds how long an operation waits for another
// process or server holding the store. Transactions are short, so a
// longer wait means a process is stuck and the caller deserves an error.
const DefaultLockTimeout = 5 * time.Second

// idleRelease is how long an unused bbolt handle stays open. Long enough
// that a busy server opens the file rarely (an open costs tens of µs), short
// enough that a command run beside an idle server gets in at once.
const idleRelease = 100 * time.Millisecond

// Options tune Open and OpenPostgres.
type Options struct {
	// LockTimeout bounds the wait for another process holding the bbolt
	// file, or another server holding PostgreSQL's writer lock; 0 means
	// DefaultLockTimeout.
	LockTimeout time.Duration
}

// boltFiles holds the open bbolt files of this process by absolute path.
var boltFiles = struct {
	sync.Mutex
	m map[string]*boltFile
}{m: map[string]*boltFile{}}

// boltFile is one database file and the handle the process holds on it.
type boltFile struct {
	path    string
	timeout time.Duration
	refs    int // Stores using the file; guarded by boltFiles

	mu     sync.Mutex
	db     *bolt.DB // nil while released
	busy   int      // transactions running on db
	last   time.Time
	idle   *time.Timer
	closed bool
}

// boltHandle is one Store's use of a shared boltFile.
type boltHandle struct {
	f      *boltFile
	closed atomic.Bool
}

// Open opens the bbolt store at path (creating the file and its buckets)
// and returns it. Failures are ERR_INIT_FAILED errors saying what to do.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "admin store %s: %v", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cannot create the admin data dir %s: %v", filepath.Dir(abs), err)
	}
	boltFiles.Lock()
	f := boltFiles.m[abs]
	first := f == nil
	if first {
		f = &boltFile{path: abs, timeout: opts.LockTimeout}
		boltFiles.m[abs] = f
	}
	f.refs++
	boltFiles.Unlock()
	if first {
		// The file's pages are walked before bbolt maps it, once per
		// process: bbolt faults on a truncated file and panics on a
		// corrupt page.
		if _, err := boltcheck.Preflight(abs, opts.LockTimeout); err != nil {
			(&boltHandle{f: f}).close()
			var damaged *boltcheck.DamagedError
			if errors.As(err, &damaged) {
				return nil, errs.New(500, errs.InitFailed, damaged.Error())
			}
			if errors.Is(err, boltcheck.ErrLocked) {
				return nil, errs.Newf(500, errs.InitFailed, "admin store %s is locked by another cairn process; stop it, or retry when it is done", abs)
			}
			return nil, errs.Newf(500, errs.InitFailed, "admin store %s: %v", abs, err)
		}
	}
	h := &boltHandle{f: f}
	if err := f.run(true, prepare); err != nil {
		h.close()
		if e, ok := errs.As(err); ok {
			return nil, errs.New(500, errs.InitFailed, e.Message)
		}
		return nil, errs.Newf(500, errs.InitFailed, "admin store %s: %v (check the file's permissions, or move a damaged file aside)", abs, err)
	}
	return &Store{b: h}, nil
}

// prepare creates the buckets and records the schema version, refusing a
// file written by a newer cairn.
func prepare(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return err
		}
	}
	meta := tx.Bucket([]byte(BucketMeta))
	if v := meta.Get([]byte("schema_version")); len(v) == 8 {
		if got := binary.BigEndian.Uint64(v); got > SchemaVersion {
			return errs.Newf(500, errs.InitFailed, "admin store %s has schema version %d, newer than this cairn understands (%d): upgrade cairn", tx.DB().Path(), got, SchemaVersion)
		}
		return nil
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], SchemaVersion)
	return meta.Put([]byte("schema_version"), v[:])
}

func (h *boltHandle) describe() Description {
	return Description{Kind: "bbolt", Location: h.f.path, SchemaVersion: SchemaVersion}
}

// close releases this Store's use; the last one closes the file.
func (h *boltHandle) close() {
	if h.closed.Swap(true) {
		return
	}
	boltFiles.Lock()
	defer boltFiles.Unlock()
	f := h.f
	if f.refs--; f.refs > 0 {
		return
	}
	delete(boltFiles.m, f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.release()
}

func (h *boltHandle) update(fn func(tx Tx) error) error {
	if h.closed.Load() {
		return errClosed(h.f.path)
	}
	return h.f.run(true, func(tx *bolt.Tx) error { return fn(kv.Bolt(tx)) })
}

func (h *boltHandle) view(fn func(tx Tx) error) error {
	if h.closed.Load() {
		return errClosed(h.f.path)
	}
	return h.f.run(false, func(tx *bolt.Tx) error { return fn(kv.Bolt(tx)) })
}

// peek is a view: bbolt's read transactions cost no round trip.
func (h *boltHandle) peek(fn func(tx Tx) error) error { return h.view(fn) }

func errClosed(path string) error {
	return errs.Newf(500, errs.Internal, "admin store %s is closed", path)
}

// run runs fn in one transaction on the held handle, opening the file
// first when it was released.
func (f *boltFile) run(writable bool, fn func(tx *bolt.Tx) error) error {
	db, err := f.acquire()
	if err != nil {
		return err
	}
	defer f.done()
	if writable {
		return db.Update(fn)
	}
	return db.View(fn)
}

func (f *boltFile) acquire() (*bolt.DB, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errClosed(f.path)
	}
	if f.db == nil {
		// The file released while idle may have vanished meanwhile: one
		// the data dir has held is not recreated empty (docs/decisions.md
		// D42).
		if fi, err := os.Stat(f.path); err != nil || fi.Size() == 0 {
			var damaged *boltcheck.DamagedError
			if _, err := boltcheck.Preflight(f.path, f.timeout); errors.As(err, &damaged) {
				return nil, errs.New(500, errs.Internal, damaged.Error())
			}
		}
		var db *bolt.DB
		err := boltcheck.Guard(f.path, func() error {
			var err error
			db, err = bolt.Open(f.path, 0o600, &bolt.Options{Timeout: f.timeout})
			return err
		})
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, errs.Newf(503, errs.Unavailable, "admin store %s is locked by another cairn process; stop it, or retry when it is done (waited %s)", f.path, f.timeout)
		}
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", f.path, err)
		}
		f.db = db
		f.idle = time.AfterFunc(idleRelease, f.releaseIfIdle)
	}
	f.busy++
	return f.db, nil
}

func (f *boltFile) done() {
	f.mu.Lock()
	f.busy--
	f.last = time.Now()
	f.mu.Unlock()
}

// releaseIfIdle closes the handle once no transaction ran on it for
// idleRelease, and otherwise looks again when that time would be up.
func (f *boltFile) releaseIfIdle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return
	}
	if f.busy > 0 {
		f.idle.Reset(idleRelease)
		return
	}
	if left := idleRelease - time.Since(f.last); left > 0 {
		f.idle.Reset(left)
		return
	}
	f.release()
}

// release closes the handle (waiting for running transactions); the
// caller holds f.mu.
func (f *boltFile) release() {
	if f.db == nil {
		return
	}
	f.idle.Stop()
	// A failed close loses nothing (every commit is already on disk), and
	// the next open reports a damaged file.
	_ = f.db.Close()
	f.db = nil
}
