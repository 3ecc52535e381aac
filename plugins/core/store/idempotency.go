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
// Retention is bounded by generations rather than by an age index: records
// go into the current generation's bucket; once it holds
// IdempotencyMaxKeys/2 keys, or its first record is older than
// IdempotencyRetention, the previous generation is dropped whole and the
// current one takes its place. So at most IdempotencyMaxKeys keys are kept,
// and a key is honoured for IdempotencyRetention unless
// IdempotencyMaxKeys/2 later keys came first. A record then costs one put,
// where an age index cost two trees and the pruning of the oldest keys a
// random leaf more on every write. A replay arrives within seconds of the
// first attempt, so either bound is far beyond what a replay needs.

// IdempotencyRetention is how long a recorded key is honoured.
const IdempotencyRetention = 24 * time.Hour

// IdempotencyMaxKeys bounds how many keys are kept: two generations of at
// most half as many.
const IdempotencyMaxKeys = 10000

const generationKeys = IdempotencyMaxKeys / 2

var (
	// keyIdemCount counts the keys of the current generation.
	keyIdemCount = []byte("idempotency_count")
	// keyIdemGeneration names the current generation's bucket: absent or
	// 0 for BucketIdempotency, 1 for BucketIdempotencyAlt.
	keyIdemGeneration = []byte("idempotency_generation")
	// keyIdemSince is when the current generation's first key was
	// recorded (unix ms); absent while it holds none.
	keyIdemSince = []byte("idempotency_since")
)

// generations returns the current generation's bucket name and the
// previous one's.
func generations(meta kv.Bucket) (current, previous []byte) {
	if v := meta.Get(keyIdemGeneration); len(v) == 1 && v[0] == 1 {
		return []byte(BucketIdempotencyAlt), []byte(BucketIdempotency)
	}
	return []byte(BucketIdempotency), []byte(BucketIdempotencyAlt)
}

// idemKey scopes key by the tool (or other writer) that recorded it, so one
// key reused across tools can never return another tool's output.
func idemKey(scope, key string) []byte {
	k := make([]byte, 0, len(scope)+1+len(key))
	k = append(k, scope...)
	k = append(k, 0)
	return append(k, key...)
}

// OnceKeys are the keys Once reads for (scope, key) on PostgreSQL, with
// more, for tx.Prefetch: a write reads them all in one round trip.
func OnceKeys(tx kv.Tx, scope, key string, more ...kv.Key) []kv.Key {
	meta := []byte(BucketMeta)
	keys := append(more,
		kv.Key{Bucket: meta, Key: keyIdemGeneration},
		kv.Key{Bucket: meta, Key: keyIdemSince},
		kv.Key{Bucket: meta, Key: keyIdemCount},
		kv.Key{Bucket: meta, Key: keyIdemGranted},
		kv.Key{Bucket: []byte(BucketIdempotencyGrants), Key: tx.Shard()},
	)
	if key != "" {
		k := idemKey(scope, key)
		keys = append(keys, kv.Key{Bucket: []byte(BucketIdempotency), Key: k}, kv.Key{Bucket: []byte(BucketIdempotencyAlt), Key: k})
	}
	return keys
}

// Recorded returns the output recorded under (scope, key) inside tx, if any
// and not expired at now.
func Recorded(tx kv.Tx, scope, key string, now time.Time) ([]byte, bool) {
	if key == "" {
		return nil, false
	}
	meta := tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return nil, false
	}
	k := idemKey(scope, key)
	current, previous := generations(meta)
	for _, name := range [][]byte{current, previous} {
		b := tx.Bucket(name)
		if !b.Exists() {
			continue
		}
		v := b.Get(k)
		if len(v) < 8 {
			continue
		}
		at := time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
		if now.Sub(at) > IdempotencyRetention {
			return nil, false
		}
		return append([]byte(nil), v[8:]...), true
	}
	return nil, false
}

// Record stores output under (scope, key) inside tx — the transaction of the
// write the output describes — first starting a new generation when the
// current one is full or old. An empty key records nothing.
func Record(tx kv.Tx, scope, key string, output []byte, now time.Time) error {
	if key == "" {
		return nil
	}
	meta := tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return fmt.Errorf("store: meta bucket missing")
	}
	ms := uint64(now.UnixMilli())
	count := getU64(meta, keyIdemCount)
	since := getU64(meta, keyIdemSince)
	current, previous := generations(meta)
	aged := since != 0 && ms > since && time.Duration(ms-since)*time.Millisecond > IdempotencyRetention
	if tx.Shared() {
		// On PostgreSQL servers count under grants (idemgrants.go).
		return recordGranted(tx, meta, idemKey(scope, key), output, ms, aged)
	}
	if count >= generationKeys || aged {
		if err := turnGeneration(tx, meta, current, previous); err != nil {
			return err
		}
		current, count, since = previous, 0, 0
	}
	b := tx.Bucket(current)
	if !b.Exists() {
		return fmt.Errorf("store: idempotency bucket %s missing", current)
	}
	k := idemKey(scope, key)
	if old := b.Get(k); len(old) < 8 {
		count++
	}
	if err := putIdem(b, k, output, ms); err != nil {
		return err
	}
	if since == 0 {
		if err := meta.Put(keyIdemSince, U64(ms)); err != nil {
			return err
		}
	}
	return meta.Put(keyIdemCount, U64(count))
}

// turnGeneration drops the previous generation's records and makes its
// bucket the current one's.
func turnGeneration(tx kv.Tx, meta kv.Bucket, current, previous []byte) error {
	if err := tx.Clear(previous); err != nil {
		return err
	}
	next := byte(1)
	if string(current) == BucketIdempotencyAlt {
		next = 0
	}
	return meta.Put(keyIdemGeneration, []byte{next})
}

// IdempotentCount reports how many keys are kept, both generations
// counted (for tests and health).
func IdempotentCount(tx kv.Tx) uint64 {
	meta := tx.Bucket([]byte(BucketMeta))
	if !meta.Exists() {
		return 0
	}
	_, previous := generations(meta)
	n := getU64(meta, keyIdemCount) + grantsUsed(tx)
	if b := tx.Bucket(previous); b.Exists() {
		n += uint64(b.Count())
	}
	return n
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
