// Package store is the admin area's (Area B) store, shared by the admin
// library, the webhook manager, the admin plugin process and the
// `cairn admin` CLI. The domain code sees ordered buckets of keys and
// values inside transactions (Tx, tx.go); two backends provide them:
// bbolt files in the data dir (bolt.go, the default) and PostgreSQL
// (postgres.go, CAIRN_STORE=postgres://…, docs/decisions.md D26), where several
// cairn servers share one truth. Both give every Update the same
// guarantee: it runs alone, serialized with every other Update of every
// process or server, and commits durably or not at all.
package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// FileName is the admin store's file name inside the data dir.
const FileName = "admin.db"

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
	// BucketDeliveryByEvent and BucketDeliveryByEventB mark the webhooks a
	// bus event was queued for (event id, 0, webhook id → 1), so a
	// redelivered event (one published again after its server died) queues
	// nothing new. They are two generations, the older dropped whole
	// (plugins/admin/webhooks/byevent.go).
	BucketDeliveryByEvent  = "delivery_byevent"
	BucketDeliveryByEventB = "delivery_byevent_b"
)

var allBuckets = []string{
	BucketMeta, BucketCounters, BucketKeys, BucketKeyHash, BucketKeyUsage, BucketKeyDaily, BucketKeyAudit,
	BucketWorkspaces, BucketMembers, BucketInvitations, BucketInviteHash, BucketProjects, BucketProjectSlug,
	BucketOutbox, BucketWebhooks, BucketDeliveries, BucketDeliveryDue, BucketDeliveryByHook, BucketDeliveryByEvent,
	BucketDeliveryByEventB, BucketIdempotency, BucketIdempotencyOrder, BucketIdempotencySealed,
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
type FanoutFunc func(tx Tx, ev Event) error

// Store is the admin store on one backend.
type Store struct {
	b backend

	fmu    sync.RWMutex
	fanout []FanoutFunc
}

// backend runs transactions: update alone among all writers of every
// process and server, view on a consistent snapshot.
type backend interface {
	update(fn func(tx Tx) error) error
	view(fn func(tx Tx) error) error
	peek(fn func(tx Tx) error) error
	describe() Description
	close()
}

// Description says where a store keeps its data, for health and logs.
type Description struct {
	// Kind is "bbolt" or "postgres".
	Kind string `json:"kind"`
	// Location is the file, or the database URL without its password.
	Location string `json:"location"`
	// SchemaVersion is the layout or migration version in use.
	SchemaVersion int `json:"schema_version"`
}

// Describe says where the store keeps its data.
func (s *Store) Describe() Description { return s.b.describe() }

// Path is the database file, or the URL without its password on
// PostgreSQL.
func (s *Store) Path() string { return s.b.describe().Location }

// Close releases the backend: PostgreSQL's connections, or this Store's use
// of the bbolt file (the process's last Store on it closes the file).
func (s *Store) Close() { s.b.close() }

// OnEmit registers a fan-out hook for emitted events.
func (s *Store) OnEmit(f FanoutFunc) {
	s.fmu.Lock()
	s.fanout = append(s.fanout, f)
	s.fmu.Unlock()
}

// Latency measures one trivial read (the schema version), for health.
func (s *Store) Latency() (time.Duration, error) {
	start := time.Now()
	err := s.View(func(tx Tx) error {
		_ = tx.Bucket([]byte(BucketMeta)).Get([]byte("schema_version"))
		return nil
	})
	return time.Since(start), err
}

// Update runs fn in one write transaction, alone among all writers.
func (s *Store) Update(fn func(tx Tx) error) error { return s.b.update(fn) }

// View runs fn in one read-only transaction on a consistent snapshot.
func (s *Store) View(fn func(tx Tx) error) error { return s.b.view(fn) }

// Peek is View for a hot path that usually reads once: on PostgreSQL its
// first read runs without a transaction, and fn runs again in a View if it
// reads more (kv.PG.Peek), so fn must be safe to run twice.
func (s *Store) Peek(fn func(tx Tx) error) error { return s.b.peek(fn) }

// NextSeq returns the next number of a named counter (from 1, never reused).
func NextSeq(tx Tx, name string) (uint64, error) {
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
func Get(tx Tx, bucket string, key []byte, v any) (found bool, err error) {
	raw := tx.Bucket([]byte(bucket)).Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// GetOne decodes the JSON record under key in bucket outside any
// transaction: one statement on PostgreSQL, a View on bbolt. found is false
// when it is absent.
func (s *Store) GetOne(bucket string, key []byte, v any) (found bool, err error) {
	var raw []byte
	if pg, ok := s.b.(*pgBackend); ok {
		raw, err = pg.getOne(bucket, key)
	} else {
		err = s.View(func(tx Tx) error {
			raw = bytes.Clone(tx.Bucket([]byte(bucket)).Get(key))
			return nil
		})
	}
	if err != nil || raw == nil {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// Put stores v as JSON under key in bucket.
func Put(tx Tx, bucket string, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket([]byte(bucket)).Put(key, raw)
}

// Emit records ev inside tx: every fan-out hook sees it (queueing webhook
// deliveries atomically with the change), and when toBus is true it is
// appended to the outbox the admin plugin drains onto the host's bus.
func (s *Store) Emit(tx Tx, ev Event, toBus bool) error {
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
	if err := s.View(func(tx Tx) error {
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
		if err := s.Update(func(tx Tx) error {
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

// Buckets names every bucket of the admin store.
func Buckets() []string { return append([]string(nil), allBuckets...) }
