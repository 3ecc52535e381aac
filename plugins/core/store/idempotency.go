package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// Idempotency records (docs/decisions.md D21): a call replayed after its server
// died must not write twice. A tool that honours the key looks it up at the
// start of its write transaction and, when it is new, records the call's
// output in that same transaction, so "written" and "recorded" commit
// together or not at all.
//
// Retention is bounded: a key is kept for IdempotencyRetention and at most
// IdempotencyMaxKeys keys are kept; a replay arrives within seconds of the
// first attempt, so either bound is far beyond what a replay needs.

// IdempotencyRetention is how long a recorded key is honoured.
const IdempotencyRetention = 24 * time.Hour

// IdempotencyMaxKeys bounds how many keys are kept; the oldest go first.
const IdempotencyMaxKeys = 10000

// pruneBatch bounds how many expired keys one Record deletes, so a write
// never pays for a long backlog at once; each Record adds one key and
// removes up to this many, so the backlog shrinks.
const pruneBatch = 16

var (
	keyIdemCount = []byte("idempotency_count")
	keyIdemSeq   = []byte("idempotency_seq")
)

// idemKey scopes key by the tool (or other writer) that recorded it, so one
// key reused across tools can never return another tool's output.
func idemKey(scope, key string) []byte {
	k := make([]byte, 0, len(scope)+1+len(key))
	k = append(k, scope...)
	k = append(k, 0)
	return append(k, key...)
}

// Recorded returns the output recorded under (scope, key) inside tx, if any
// and not expired at now.
func Recorded(tx kv.Tx, scope, key string, now time.Time) ([]byte, bool) {
	if key == "" {
		return nil, false
	}
	b := tx.Bucket([]byte(BucketIdempotency))
	if !b.Exists() {
		return nil, false
	}
	v := b.Get(idemKey(scope, key))
	if len(v) < 8 {
		return nil, false
	}
	at := time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
	if now.Sub(at) > IdempotencyRetention {
		return nil, false
	}
	return append([]byte(nil), v[8:]...), true
}

// Record stores output under (scope, key) inside tx — the transaction of the
// write the output describes — and prunes the oldest keys beyond the
// retention bounds. An empty key records nothing.
func Record(tx kv.Tx, scope, key string, output []byte, now time.Time) error {
	if key == "" {
		return nil
	}
	b := tx.Bucket([]byte(BucketIdempotency))
	order := tx.Bucket([]byte(BucketIdempotencyOrder))
	meta := tx.Bucket([]byte(BucketMeta))
	if !b.Exists() || !order.Exists() || !meta.Exists() {
		return fmt.Errorf("store: idempotency buckets missing")
	}
	k := idemKey(scope, key)
	ms := uint64(now.UnixMilli())
	count := getU64(meta, keyIdemCount)
	if old := b.Get(k); len(old) >= 8 {
		// Re-recording (an expired key used again) replaces the entry;
		// its old order entry is found and removed by pruning later, which
		// checks that an order entry still names a live record.
		count--
	}
	v := make([]byte, 8, 8+len(output))
	binary.BigEndian.PutUint64(v, ms)
	v = append(v, output...)
	if err := b.Put(k, v); err != nil {
		return err
	}
	seq := getU64(meta, keyIdemSeq) + 1
	ok := make([]byte, 16)
	binary.BigEndian.PutUint64(ok, ms)
	binary.BigEndian.PutUint64(ok[8:], seq)
	if err := order.Put(ok, k); err != nil {
		return err
	}
	count++
	if err := meta.Put(keyIdemSeq, U64(seq)); err != nil {
		return err
	}
	// Prune from the oldest: past the count bound or the age bound.
	c := order.Cursor()
	cutoff := now.Add(-IdempotencyRetention).UnixMilli()
	for i := 0; i < pruneBatch; i++ {
		ok, rk := c.First()
		if ok == nil || len(ok) != 16 {
			break
		}
		at := int64(binary.BigEndian.Uint64(ok))
		if count <= IdempotencyMaxKeys && at >= cutoff {
			break
		}
		// The order entry is stale when its key was re-recorded later.
		if rv := b.Get(rk); len(rv) >= 8 && binary.BigEndian.Uint64(rv) == uint64(at) {
			if err := b.Delete(rk); err != nil {
				return err
			}
			count--
		}
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return meta.Put(keyIdemCount, U64(count))
}

// IdempotentCount reports how many keys are recorded (for tests and health).
func IdempotentCount(tx kv.Tx) uint64 {
	meta := tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return 0
	}
	return getU64(meta, keyIdemCount)
}

func getU64(b kv.Bucket, k []byte) uint64 {
	if v := b.Get(k); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// Once is the whole pattern for a tool handler inside its write
// transaction: when (scope, key) was recorded it returns the recorded output
// decoded into T and replayed = true, writing nothing; otherwise it runs
// write and records its output (as JSON) in the same transaction. write's
// error is returned as is and records nothing (the transaction is rolled
// back by the caller returning it).
//
//	err := st.Commit(func(tx kv.Tx) error {
//		out, _, err = store.Once(tx, "thought_record", idem.Key, now, func() (Out, error) { ... })
//		return err
//	})
func Once[T any](tx kv.Tx, scope, key string, now time.Time, write func() (T, error)) (out T, replayed bool, err error) {
	if raw, ok := Recorded(tx, scope, key, now); ok {
		if err := json.Unmarshal(raw, &out); err != nil {
			return out, false, fmt.Errorf("store: recorded output of %s is corrupt: %w", scope, err)
		}
		return out, true, nil
	}
	out, err = write()
	if err != nil || key == "" {
		return out, false, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return out, false, err
	}
	return out, false, Record(tx, scope, key, raw, now)
}
