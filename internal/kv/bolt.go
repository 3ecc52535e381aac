package kv

import (
	"errors"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bolt presents a bbolt transaction as a Tx. The wrappers hold one pointer,
// so putting them in an interface allocates nothing, and bbolt's own cursor
// already has Cursor's methods.
func Bolt(tx *bolt.Tx) Tx { return boltTx{tx} }

type boltTx struct{ tx *bolt.Tx }

func (t boltTx) Bucket(name []byte) Bucket {
	b := t.tx.Bucket(name)
	if b == nil {
		return nil
	}
	return boltBucket{b}
}

// Clear drops and recreates the bucket: bbolt frees a dropped bucket's
// pages at once, where deleting key by key would rewrite every page.
func (t boltTx) Clear(name []byte) error {
	if err := t.tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return err
	}
	_, err := t.tx.CreateBucket(name)
	return err
}

func (t boltTx) Writable() bool { return t.tx.Writable() }

type boltBucket struct{ *bolt.Bucket }

func (b boltBucket) Cursor() Cursor { return b.Bucket.Cursor() }

func (b boltBucket) Count() int { return b.Stats().KeyN }
