// Package store is the admin area's (Area B) bbolt store, shared by the
// admin library, the webhook manager, the admin plugin process, the
// `cairn admin` CLI and the host's HTTP authentication.
//
// bbolt holds an exclusive file lock for as long as a database is open, so a
// long-lived handle in the plugin process would lock the operator CLI and
// the host out. Instead every operation opens the file, runs exactly one
// transaction and closes it again. Opens are serialized by a lock file next
// to the database that is polled at a fine grain (bbolt's own lock wait
// sleeps 50 ms between attempts): read-only operations take it shared and
// open bbolt read-only, writes take it exclusively. Within one process a
// sync.RWMutex orders goroutines first, because flock locks belong to an
// open file description and would otherwise make goroutines of the same
// process wait on each other through the kernel.
//
// Commits are durable (bbolt fsyncs every commit; NoSync is never set).
package store

import (
	"encoding/binary"
	"encoding/json"
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

// FileName is the admin store's file name inside the data dir.
const FileName = "admin.db"

// DefaultLockTimeout bounds how long one operation waits for another
// process's transaction. Transactions are short, so a longer wait means a
// process is stuck and the caller deserves an error.
const DefaultLockTimeout = 5 * time.Second

// Bucket names. They are part of the on-disk format.
const (
	BucketMeta           = "meta"
	BucketCounters       = "counters"
	BucketKeys           = "api_keys"
	BucketKeyHash        = "api_key_hash"  // sha256 hex → key id
	BucketKeyUsage       = "api_key_usage" // key id → usage and rate windows
	BucketKeyDaily       = "api_key_daily" // key id, 0, yyyy-mm-dd → count
	BucketKeyAudit       = "api_key_audit" // key id, 0, seq → entry
	BucketWorkspaces     = "workspaces"
	BucketMembers        = "members" // workspace id, 0, user id → record
	BucketInvitations    = "invitations"
	BucketInviteHash     = "invitation_hash" // sha256 hex → invitation id
	BucketProjects       = "projects"
	BucketProjectSlug    = "project_slug" // slug → project id
	BucketOutbox         = "outbox"       // seq → event for the host bus
	BucketWebhooks       = "webhooks"
	BucketDeliveries     = "deliveries"
	BucketDeliveryDue    = "delivery_due"  // unix nanos, id → empty
	BucketDeliveryByHook = "delivery_bywh" // webhook id, 0, created nanos, id → empty
)

var allBuckets = []string{
	BucketMeta, BucketCounters, BucketKeys, BucketKeyHash, BucketKeyUsage, BucketKeyDaily, BucketKeyAudit,
	BucketWorkspaces, BucketMembers, BucketInvitations, BucketInviteHash, BucketProjects, BucketProjectSlug,
	BucketOutbox, BucketWebhooks, BucketDeliveries, BucketDeliveryDue, BucketDeliveryByHook,
}

// SchemaVersion is the layout version this build writes.
const SchemaVersion = 1

// Event is an administration event: delivered to subscribed webhooks and,
// when it originates in the admin area, published on the host's bus.
type Event struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Source string          `json:"source,omitempty"`
	Time   string          `json:"time"`
	Data   json.RawMessage `json:"data"`
}

// FanoutFunc receives every emitted event inside the emitting transaction;
// the webhook manager registers one that queues deliveries.
type FanoutFunc func(tx *bolt.Tx, ev Event) error

// Options tune Open.
type Options struct {
	// LockTimeout bounds the wait for another process's transaction; 0
	// means DefaultLockTimeout.
	LockTimeout time.Duration
}

// Store is the admin store. It keeps no file open between operations.
type Store struct {
	path    string
	lock    string
	timeout time.Duration

	mu sync.RWMutex

	fmu    sync.RWMutex
	fanout []FanoutFunc
}

// Open prepares the store at path (creating the file and its buckets) and
// returns it. Failures are ERR_INIT_FAILED errors saying what to do.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Newf(500, errs.InitFailed, "cannot create the admin data dir %s: %v", filepath.Dir(path), err)
	}
	s := &Store{path: path, lock: path + ".lock", timeout: opts.LockTimeout}
	err := s.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
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
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// OnEmit registers a fan-out hook for emitted events.
func (s *Store) OnEmit(f FanoutFunc) {
	s.fmu.Lock()
	s.fanout = append(s.fanout, f)
	s.fmu.Unlock()
}

// Update runs fn in one write transaction on a freshly opened database.
func (s *Store) Update(fn func(tx *bolt.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.flock(true)
	if err != nil {
		return err
	}
	defer unlock()
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: s.timeout})
	if err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	txErr := db.Update(fn)
	if cerr := db.Close(); cerr != nil && txErr == nil {
		txErr = cerr
	}
	return txErr
}

// View runs fn in one read-only transaction.
func (s *Store) View(fn func(tx *bolt.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	unlock, err := s.flock(false)
	if err != nil {
		return err
	}
	defer unlock()
	db, err := bolt.Open(s.path, 0o600, &bolt.Options{Timeout: s.timeout, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	txErr := db.View(fn)
	if cerr := db.Close(); cerr != nil && txErr == nil {
		txErr = cerr
	}
	return txErr
}

// flock takes the cross-process lock, polling with a short, growing
// interval so a waiting process gets in soon after the holder finishes.
func (s *Store) flock(exclusive bool) (func(), error) {
	f, err := os.OpenFile(s.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", s.lock, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(s.timeout)
	wait := 100 * time.Microsecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", s.lock, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, errs.Newf(503, errs.Unavailable, "the admin store %s stayed locked by another process for %s; retry, or look for a stuck cairn process", s.path, s.timeout)
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

// NextSeq returns the next number of a named counter (from 1, never reused).
func NextSeq(tx *bolt.Tx, name string) (uint64, error) {
	b := tx.Bucket([]byte(BucketCounters))
	var n uint64
	if v := b.Get([]byte(name)); len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	n++
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], n)
	return n, b.Put([]byte(name), v[:])
}

// U64 encodes n big-endian, so byte order is numeric order.
func U64(n uint64) []byte {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], n)
	return v[:]
}

// Key joins parts with a 0 byte, the separator of every composite key.
func Key(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	out := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			out = append(out, 0)
		}
		out = append(out, p...)
	}
	return out
}

// Get decodes the JSON record under key in bucket; found is false when it
// is absent.
func Get(tx *bolt.Tx, bucket string, key []byte, v any) (found bool, err error) {
	raw := tx.Bucket([]byte(bucket)).Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// Put stores v as JSON under key in bucket.
func Put(tx *bolt.Tx, bucket string, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(bucket)).Put(key, raw)
}

// Emit records ev inside tx: every fan-out hook sees it (queueing webhook
// deliveries atomically with the change), and when toBus is true it is
// appended to the outbox the admin plugin drains onto the host's bus.
func (s *Store) Emit(tx *bolt.Tx, ev Event, toBus bool) error {
	s.fmu.RLock()
	hooks := append([]FanoutFunc(nil), s.fanout...)
	s.fmu.RUnlock()
	for _, h := range hooks {
		if err := h(tx, ev); err != nil {
			return err
		}
	}
	if !toBus {
		return nil
	}
	seq, err := NextSeq(tx, "outbox")
	if err != nil {
		return err
	}
	return Put(tx, BucketOutbox, U64(seq), ev)
}

// DrainOutbox hands queued bus events to publish in order, removing each
// one publish accepted. It stops at the first failure, so nothing is lost.
func (s *Store) DrainOutbox(publish func(Event) error) (int, error) {
	type item struct {
		key []byte
		ev  Event
	}
	var items []item
	if err := s.View(func(tx *bolt.Tx) error {
		c := tx.Bucket([]byte(BucketOutbox)).Cursor()
		for k, v := c.First(); k != nil && len(items) < 256; k, v = c.Next() {
			var ev Event
			if err := json.Unmarshal(v, &ev); err != nil {
				return err
			}
			items = append(items, item{append([]byte(nil), k...), ev})
		}
		return nil
	}); err != nil || len(items) == 0 {
		return 0, err
	}
	done := 0
	var pubErr error
	for _, it := range items {
		if pubErr = publish(it.ev); pubErr != nil {
			break
		}
		done++
	}
	if done > 0 {
		if err := s.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(BucketOutbox))
			for _, it := range items[:done] {
				if err := b.Delete(it.key); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return done, err
		}
	}
	return done, pubErr
}
