// Package kv is the key-value layer the areas keep their state in
// (PRODUCT.md D26): ordered buckets of byte keys and values inside
// transactions. Two backends provide it: a bbolt file (Bolt adapts a
// *bolt.Tx at no measurable cost) and PostgreSQL (PG, one table per area,
// every update serialized cluster-wide by the area's advisory lock). The
// domain code of an area is written once against Tx and runs on either.
package kv

// Tx is one transaction: ordered buckets of byte keys and values. Keys sort
// bytewise on both backends. Slices a Tx returns are valid only until the
// transaction ends.
type Tx interface {
	// Bucket is the named bucket. On bbolt it is nil when the bucket was
	// never created; on PostgreSQL every bucket exists.
	Bucket(name []byte) Bucket
	// Clear removes every pair of the named bucket, which stays usable
	// (Update only). Bucket values taken before Clear must not be used
	// after it.
	Clear(name []byte) error
	// Writable is true inside an update.
	Writable() bool
}

// Bucket is an ordered key-value map inside a transaction.
type Bucket interface {
	// Get returns the value under key, or nil when there is none.
	Get(key []byte) []byte
	// Put stores value under key (Update only).
	Put(key, value []byte) error
	// Delete removes key (Update only); absent keys are not an error.
	Delete(key []byte) error
	// ForEach calls fn for every pair in key order; fn must not change
	// the bucket.
	ForEach(fn func(k, v []byte) error) error
	// Cursor walks the bucket in key order.
	Cursor() Cursor
	// Count is the number of keys in the bucket.
	Count() int
}

// Cursor walks a bucket; every move returns nil, nil past either end.
// Changes made in the same transaction are seen by later moves.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
	Seek(seek []byte) (key, value []byte)
	// Delete removes the pair under the cursor (Update only); the next
	// move continues from where it was.
	Delete() error
}
