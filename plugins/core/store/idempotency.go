package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
)

// Idempotency records (docs/decisions.md D42). A write that honours a key
// looks it up at the start of its transaction and, when it is new, records
// the call's fingerprint and output in that same transaction, so "written"
// and "recorded" commit together or not at all. The lookup, the comparison
// and the 409 are the SDK's (idempotency.Once); this file is where the core
// area keeps the records.
//
// Retention is by time only, whatever the write rate. The records of each
// kind of key live in a ring of buckets, one per window of time: a record
// goes into the bucket of the window it was written in, and the first
// write of a window empties the bucket the ring hands it, which last held
// the window as many windows ago as the ring has buckets. A key is so
// honoured for at least (buckets − 1) windows, a record costs one put, and
// forgetting costs one bucket cleared per window, never a walk:
//
//   - a client's own key: 5 buckets of 6 hours, honoured 24 to 30 hours;
//   - a key the host derived for its replays: 3 buckets of 5 minutes,
//     honoured 10 to 15 minutes (idempotency.DerivedHold).
//
// A record is the key's SHA-256 (32 bytes) → the call's fingerprint (32
// bytes) and its JSON output; docs/architecture.md gives the disk cost.

// ring is the buckets that keep one kind of key.
type ring struct {
	prefix  string        // bucket names: prefix + slot number
	window  time.Duration // the time each bucket covers
	buckets int
	// meta names the meta key holding the window each bucket holds
	// (8 bytes each, in bucket order).
	meta []byte
}

var (
	clientRing  = ring{prefix: "idem_client_", window: 6 * time.Hour, buckets: 5, meta: []byte("idem_windows_client")}
	derivedRing = ring{prefix: "idem_derived_", window: 5 * time.Minute, buckets: 3, meta: []byte("idem_windows_derived")}
)

// IdempotencyBuckets are the buckets of both rings (schema v9).
func IdempotencyBuckets() []string {
	var names []string
	for _, r := range []ring{clientRing, derivedRing} {
		for i := range r.buckets {
			names = append(names, r.bucketName(i))
		}
	}
	return names
}

func ringOf(k idempotency.Key) ring {
	if k.Client {
		return clientRing
	}
	return derivedRing
}

func (r ring) bucketName(i int) string { return r.prefix + strconv.Itoa(i) }

// windowAt is the number of the window now falls in.
func (r ring) windowAt(now time.Time) uint64 {
	return uint64(now.UnixMilli()) / uint64(r.window.Milliseconds())
}

// windows reads the window each bucket holds (0: none yet).
func (r ring) windows(meta kv.Bucket) []uint64 {
	w := make([]uint64, r.buckets)
	if v := meta.Get(r.meta); len(v) == 8*r.buckets {
		for i := range w {
			w[i] = binary.BigEndian.Uint64(v[8*i:])
		}
	}
	return w
}

// held reports whether a bucket holding window w still honours its keys at
// window now: the last buckets−1 windows and the current one. A window
// after now (another server's clock a little ahead) is held too.
func (r ring) held(w, now uint64) bool { return w != 0 && w+uint64(r.buckets)-1 >= now }

// outcomes is the core store's idempotency.Store inside one transaction.
type outcomes struct {
	tx  kv.Tx
	now time.Time
}

// Outcomes is the core store's idempotency.Store inside tx, at now.
func Outcomes(tx kv.Tx, now time.Time) idempotency.Store { return outcomes{tx, now} }

func (o outcomes) LoadOutcome(k idempotency.Key) (fingerprint, outcome []byte, found bool, err error) {
	meta := o.tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return nil, nil, false, nil
	}
	r := ringOf(k)
	now := r.windowAt(o.now)
	id := k.ID()
	for i, w := range r.windows(meta) {
		if !r.held(w, now) {
			continue
		}
		b := o.tx.Bucket([]byte(r.bucketName(i)))
		if !b.Exists() {
			continue
		}
		if v := b.Get(id); len(v) >= 32 {
			return append([]byte(nil), v[:32]...), append([]byte(nil), v[32:]...), true, nil
		}
	}
	return nil, nil, false, nil
}

func (o outcomes) SaveOutcome(k idempotency.Key, fingerprint, outcome []byte) error {
	if len(fingerprint) != 32 {
		return fmt.Errorf("store: an idempotency fingerprint is 32 bytes, not %d", len(fingerprint))
	}
	meta := o.tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return fmt.Errorf("store: meta bucket missing")
	}
	r := ringOf(k)
	now := r.windowAt(o.now)
	i := int(now % uint64(r.buckets))
	windows := r.windows(meta)
	if windows[i] < now {
		// The first write of a window empties the bucket it takes over.
		// Servers writing beside each other on PostgreSQL would all
		// decide to: it runs alone (docs/decisions.md D40).
		if o.tx.Concurrent() {
			return o.tx.Alone()
		}
		if err := o.tx.Clear([]byte(r.bucketName(i))); err != nil {
			return err
		}
		windows[i] = now
		v := make([]byte, 0, 8*r.buckets)
		for _, w := range windows {
			v = binary.BigEndian.AppendUint64(v, w)
		}
		if err := meta.Put(r.meta, v); err != nil {
			return err
		}
	}
	b := o.tx.Bucket([]byte(r.bucketName(i)))
	if !b.Exists() {
		return fmt.Errorf("store: idempotency bucket %s missing", r.bucketName(i))
	}
	v := make([]byte, 0, 32+len(outcome))
	return b.Put(k.ID(), append(append(v, fingerprint...), outcome...))
}

// OnceKeys are the keys Once reads for k on PostgreSQL, with more, for
// tx.Prefetch: a write reads them all in one round trip.
func OnceKeys(k idempotency.Key, more ...kv.Key) []kv.Key {
	if !k.Keyed() {
		return more
	}
	r := ringOf(k)
	keys := append(more, kv.Key{Bucket: []byte(BucketMeta), Key: r.meta})
	id := k.ID()
	for i := range r.buckets {
		keys = append(keys, kv.Key{Bucket: []byte(r.bucketName(i)), Key: id})
	}
	return keys
}

// IdempotencyHeld reports how many keys of each kind are honoured at now
// (for tests and health).
func IdempotencyHeld(tx kv.Tx, now time.Time) (client, derived int) {
	meta := tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return 0, 0
	}
	count := func(r ring) int {
		n := 0
		at := r.windowAt(now)
		for i, w := range r.windows(meta) {
			if b := tx.Bucket([]byte(r.bucketName(i))); r.held(w, at) && b.Exists() {
				n += b.Count()
			}
		}
		return n
	}
	return count(clientRing), count(derivedRing)
}

// Once is idempotency.Once over the core store inside tx: when k named
// this call it returns the recorded output decoded into T and replayed =
// true, writing nothing; k naming another call is a 409; otherwise it runs
// write and records its output (as JSON) in the same transaction. write's
// error is returned as is and records nothing (the transaction is rolled
// back by the caller returning it).
//
//	err := st.Commit(func(tx kv.Tx) error {
//		out, _, err = store.Once(tx, call.Idem, now, func() (Out, error) { ... })
//		return err
//	})
func Once[T any](tx kv.Tx, k idempotency.Key, now time.Time, write func() (T, error)) (out T, replayed bool, err error) {
	return idempotency.Once(k, outcomes{tx, now},
		func(v T) ([]byte, error) { return json.Marshal(v) },
		func(raw []byte, v *T) error { return json.Unmarshal(raw, v) },
		write)
}
