package kv

import (
	"errors"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// boltClear drops and recreates the bucket: bbolt frees a dropped bucket's
// pages at once, where deleting key by key would rewrite every page.
func boltClear(tx *bolt.Tx, name []byte) error {
	if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return err
	}
	_, err := tx.CreateBucket(name)
	return err
}
