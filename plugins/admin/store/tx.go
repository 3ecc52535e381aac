package store

// Tx is one transaction on the store: ordered buckets of byte keys and
// values. Keys sort bytewise on both backends. Slices a Tx returns are
// valid only until the transaction ends.
type Tx interface {
	// Bucket is the named bucket (one of the Bucket* names).
	Bucket(name []byte) Bucket
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
}

// Cursor walks a bucket; every method returns nil, nil past either end.
// Changes made in the same transaction are seen by later moves.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
	Seek(seek []byte) (key, value []byte)
}
