package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
)

// jsonBuckets hold one JSON record per key.
var jsonBuckets = []string{BucketKeys, BucketKeyUsage, BucketKeyAudit, BucketWorkspaces, BucketMembers,
	BucketInvitations, BucketProjects, BucketWebhooks, BucketDeliveries, BucketOutbox}

// indexBuckets map a hash to the id of a record in another bucket.
var indexBuckets = map[string]string{BucketKeyHash: BucketKeys, BucketInviteHash: BucketInvitations}

// Consistency checks an admin store file's records for `cairn store
// check`: every bucket is there, the schema version is one this build
// reads, every record decodes, and every hash index points at a record
// that exists. file names the store in the problems.
func Consistency(file string) func(db *bolt.DB) ([]boltcheck.Problem, map[string]int, error) {
	return func(db *bolt.DB) ([]boltcheck.Problem, map[string]int, error) {
		var out []boltcheck.Problem
		counts := map[string]int{}
		bad := func(bucket, record, format string, args ...any) {
			out = append(out, boltcheck.Problem{File: file, Bucket: bucket, Record: record, Damage: fmt.Sprintf(format, args...)})
		}
		err := db.View(func(tx *bolt.Tx) error {
			for _, name := range allBuckets {
				if tx.Bucket([]byte(name)) == nil {
					bad(name, "", "the bucket is missing")
				}
			}
			if meta := tx.Bucket([]byte(BucketMeta)); meta != nil {
				switch v := meta.Get([]byte("schema_version")); {
				case len(v) != 8:
					bad(BucketMeta, "schema_version", "the schema version is %d bytes, not 8", len(v))
				case binary.BigEndian.Uint64(v) > SchemaVersion:
					bad(BucketMeta, "schema_version", "schema version %d is newer than this cairn reads (%d): upgrade cairn", binary.BigEndian.Uint64(v), SchemaVersion)
				}
			}
			for _, name := range jsonBuckets {
				b := tx.Bucket([]byte(name))
				if b == nil {
					continue
				}
				_ = b.ForEach(func(k, v []byte) error {
					counts["records"]++
					if v != nil && !json.Valid(v) {
						bad(name, fmt.Sprintf("%q", k), "the record is not valid JSON")
					}
					return nil
				})
			}
			for index, target := range indexBuckets {
				b, t := tx.Bucket([]byte(index)), tx.Bucket([]byte(target))
				if b == nil || t == nil {
					continue
				}
				_ = b.ForEach(func(k, v []byte) error {
					if t.Get(v) == nil {
						bad(index, fmt.Sprintf("%q", k), "the index points at %s %q, which does not exist", target, v)
					}
					return nil
				})
			}
			return nil
		})
		return out, counts, err
	}
}

// WithBolt runs fn on the bbolt handle of the store, opening the file if
// the handle was released; it reports false (running nothing) on
// PostgreSQL.
func (s *Store) WithBolt(fn func(db *bolt.DB) error) (bool, error) {
	h, ok := s.b.(*boltHandle)
	if !ok {
		return false, nil
	}
	if h.closed.Load() {
		return true, errClosed(h.f.path)
	}
	db, err := h.f.acquire()
	if err != nil {
		return true, err
	}
	defer h.f.done()
	return true, fn(db)
}

// PostgresTables are the admin area's tables on PostgreSQL.
func PostgresTables() []string { return []string{table, QueueTable, UsageTable, DailyTable} }
