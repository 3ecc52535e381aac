// Package kv is the key-value layer the areas keep their state in
// (docs/decisions.md D26): ordered buckets of byte keys and values inside
// transactions. Two backends provide it: a bbolt file (Bolt wraps a
// *bolt.Tx) and PostgreSQL (PG, one table per area, every update
// serialized cluster-wide by the area's lock, or run side by side as shared
// updates where a write allows it). The domain code of
// an area is written once against Tx and runs on either.
//
// Tx, Bucket and Cursor are small structs that call one backend or the
// other, not interfaces: a key or bucket name passed to an interface
// method escapes to the heap, which would cost the bbolt path an
// allocation per lookup. The PostgreSQL path copies what it hands to the
// driver, so on bbolt nothing escapes that did not before.
package kv

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// Tx is one transaction: ordered buckets of byte keys and values. Keys sort
// bytewise on both backends. Slices a Tx returns are valid only until the
// transaction ends.
type Tx struct {
	bolt *bolt.Tx
	pg   *pgTx
	// ov is a transaction of a journaled bbolt store (overlay.go).
	ov *ovTx
}

// Bolt presents a bbolt transaction as a Tx.
func Bolt(tx *bolt.Tx) Tx { return Tx{bolt: tx} }

// Bucket is the named bucket. On bbolt it does not exist (Exists is
// false) when it was never created; on PostgreSQL every bucket exists.
func (t Tx) Bucket(name []byte) Bucket {
	if t.pg != nil {
		return Bucket{pg: &pgBucket{t: t.pg, name: string(name)}}
	}
	if t.ov != nil {
		return t.ov.bucket(name)
	}
	return Bucket{bolt: t.bolt.Bucket(name)}
}

// Clear removes every pair of the named bucket, which stays usable
// (Update only). Buckets taken before Clear must not be used after it.
func (t Tx) Clear(name []byte) error {
	if t.pg != nil {
		return t.pg.clear(string(name))
	}
	if t.ov != nil {
		return t.ov.clear(name)
	}
	return boltClear(t.bolt, name)
}

// Shared reports whether the store is PostgreSQL, shared by the servers of
// a team: there a write that would wait for a later transaction to finish
// it must not, since that transaction would take the writers' lock
// cluster-wide on behalf of a read.
func (t Tx) Shared() bool { return t.pg != nil }

// Writable is true inside an update.
func (t Tx) Writable() bool {
	if t.pg != nil {
		return t.pg.writable
	}
	if t.ov != nil {
		return t.ov.own != nil
	}
	return t.bolt.Writable()
}

// Bucket is an ordered key-value map inside a transaction.
type Bucket struct {
	bolt *bolt.Bucket
	pg   *pgBucket
	ov   *ovBucket
}

// Exists is false for a bbolt bucket that was never created.
func (b Bucket) Exists() bool { return b.bolt != nil || b.pg != nil || b.ov != nil }

// Get returns the value under key, or nil when there is none.
func (b Bucket) Get(key []byte) []byte {
	if b.pg != nil {
		return b.pg.get(bytes.Clone(key))
	}
	if b.ov != nil {
		return b.ov.get(key)
	}
	return b.bolt.Get(key)
}

// Put stores value under key (Update only).
func (b Bucket) Put(key, value []byte) error {
	if b.pg != nil {
		return b.pg.put(bytes.Clone(key), bytes.Clone(value))
	}
	if b.ov != nil {
		return b.ov.put(key, value)
	}
	return b.bolt.Put(key, value)
}

// Delete removes key (Update only); absent keys are not an error.
func (b Bucket) Delete(key []byte) error {
	if b.pg != nil {
		return b.pg.delete(bytes.Clone(key))
	}
	if b.ov != nil {
		return b.ov.delete(key)
	}
	return b.bolt.Delete(key)
}

// ForEach calls fn for every pair in key order; fn must not change the
// bucket.
func (b Bucket) ForEach(fn func(k, v []byte) error) error {
	if b.pg != nil {
		return b.pg.forEach(fn)
	}
	if b.ov != nil {
		c := b.ov.cursor()
		for k, v := c.first(); k != nil; k, v = c.next() {
			if err := fn(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	return b.bolt.ForEach(fn)
}

// Cursor walks the bucket in key order.
func (b Bucket) Cursor() Cursor {
	if b.pg != nil {
		return Cursor{pg: &pgCursor{b: b.pg}}
	}
	if b.ov != nil {
		return Cursor{ov: b.ov.cursor()}
	}
	return Cursor{bolt: b.bolt.Cursor()}
}

// Count is the number of keys in the bucket.
func (b Bucket) Count() int {
	if b.pg != nil {
		return b.pg.count()
	}
	if b.ov != nil {
		return b.ov.count()
	}
	if !b.bolt.Tx().Writable() {
		return b.bolt.Stats().KeyN
	}
	// bbolt's statistics read the pages, not the changes of a write
	// transaction still in memory: count those by walking.
	n := 0
	c := b.bolt.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// Cursor walks a bucket; every move returns nil, nil past either end.
// Changes made in the same transaction are seen by later moves.
type Cursor struct {
	bolt *bolt.Cursor
	pg   *pgCursor
	ov   *ovCursor
}

// First moves to the first pair.
func (c Cursor) First() (key, value []byte) {
	if c.pg != nil {
		return c.pg.fetch(true, nil, true)
	}
	if c.ov != nil {
		return c.ov.first()
	}
	return c.bolt.First()
}

// Last moves to the last pair.
func (c Cursor) Last() (key, value []byte) {
	if c.pg != nil {
		return c.pg.fetch(false, nil, true)
	}
	if c.ov != nil {
		return c.ov.last()
	}
	return c.bolt.Last()
}

// Next moves to the next pair.
func (c Cursor) Next() (key, value []byte) {
	if c.pg != nil {
		return c.pg.step(true)
	}
	if c.ov != nil {
		return c.ov.next()
	}
	return c.bolt.Next()
}

// Prev moves to the previous pair.
func (c Cursor) Prev() (key, value []byte) {
	if c.pg != nil {
		return c.pg.step(false)
	}
	if c.ov != nil {
		return c.ov.prev()
	}
	return c.bolt.Prev()
}

// Seek moves to the first pair whose key is seek or after it.
func (c Cursor) Seek(seek []byte) (key, value []byte) {
	if c.pg != nil {
		// A nil seek reads as the first key on both backends.
		return c.pg.fetch(true, append([]byte{}, seek...), true)
	}
	if c.ov != nil {
		return c.ov.seek(seek)
	}
	return c.bolt.Seek(seek)
}

// Delete removes the pair under the cursor (Update only); the next move
// continues from where it was.
func (c Cursor) Delete() error {
	if c.pg != nil {
		return c.pg.delete()
	}
	if c.ov != nil {
		return c.ov.delete()
	}
	return c.bolt.Delete()
}
