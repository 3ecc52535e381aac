package store

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// CommitFloor measures the floor every durable write pays: the rate of
// bare bbolt transactions that each put one key and fsync, in a fresh file
// at path. The write benchmarks report their rate as a ratio to it, taken
// in the same run, since absolute rates vary with the disk and its load.
func CommitFloor(path string, n int) (perSecond float64, err error) {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	commit := func(i int) error {
		return db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("k"))
			if err != nil {
				return err
			}
			return bk.Put(U64(uint64(i)), []byte("v"))
		})
	}
	// Warm up past the file's first growth, as a store in use is.
	for i := 0; i < 50; i++ {
		if err := commit(i); err != nil {
			return 0, err
		}
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := commit(1000 + i); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
