package kv

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The bbolt adapter's cost: point reads and a cursor walk over 10,000
// keys, on *bolt.Tx directly and through Tx, in the same run.
func BenchmarkBoltAdapter(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "kv.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	name := []byte("b")
	const n = 10_000
	if err := db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket(name)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			k := binary.BigEndian.AppendUint64(nil, uint64(i))
			if err := bk.Put(k, k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin(false)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var key [8]byte
	b.Run("get/bolt", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			binary.BigEndian.PutUint64(key[:], uint64(i%n))
			if tx.Bucket(name).Get(key[:]) == nil {
				b.Fatal("missing")
			}
		}
	})
	b.Run("get/kv", func(b *testing.B) {
		t := Bolt(tx)
		for i := 0; b.Loop(); i++ {
			binary.BigEndian.PutUint64(key[:], uint64(i%n))
			if t.Bucket(name).Get(key[:]) == nil {
				b.Fatal("missing")
			}
		}
	})
	b.Run("walk/bolt", func(b *testing.B) {
		for b.Loop() {
			c := tx.Bucket(name).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
			}
		}
	})
	b.Run("walk/kv", func(b *testing.B) {
		t := Bolt(tx)
		for b.Loop() {
			c := t.Bucket(name).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
			}
		}
	})
}
