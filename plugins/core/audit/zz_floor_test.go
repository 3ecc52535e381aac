package audit

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func BenchmarkZZFloor(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "f.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var k [8]byte
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(k[:], uint64(i))
		if err := db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("f"))
			if err != nil {
				return err
			}
			return bk.Put(k[:], k[:])
		}); err != nil {
			b.Fatal(err)
		}
	}
}
