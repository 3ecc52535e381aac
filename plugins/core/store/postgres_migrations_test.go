package store

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// A PostgreSQL store written before idempotency generations and chain
// heads beside their links (migrations 1 and 2 only) is brought up: each
// head moves into chain_links under position 2⁶⁴−1, and the age index of
// idempotency keys and the heads bucket go.
func TestPostgresMigrationsMoveHeadsAndDropTheAgeIndex(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	pool, err := pgmigrate.Connect(ctx, dsn, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pgmigrate.Apply(ctx, pool, MigrationArea, Migrations[:1]); err != nil {
		t.Fatal(err)
	}
	head := []byte{0, 0, 0, 0, 0, 0, 0, 7, 't'}
	rows := [][3]any{
		{"chain_heads", head, []byte("position and hash")},
		{"chain_links", append(append([]byte(nil), head...), 0, 0, 0, 0, 0, 0, 0, 1), []byte("a link")},
		{"idempotency_order", []byte("order key"), []byte("scoped key")},
		{"meta", []byte("idempotency_seq"), []byte{0, 0, 0, 0, 0, 0, 0, 9}},
		{"meta", []byte("user_version"), U64(6)},
	}
	for _, r := range rows {
		if _, err := pool.Exec(ctx, "INSERT INTO "+Table+" (bucket, key, value) VALUES ($1, $2, $3)", r[0], r[1], r[2]); err != nil {
			t.Fatal(err)
		}
	}
	st, err := OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_ = st.View(func(tx kv.Tx) error {
		moved := tx.Bucket([]byte(BucketChainLinks)).Get(append(append([]byte(nil), head...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
		if !bytes.Equal(moved, []byte("position and hash")) {
			t.Errorf("head beside the links holds %q", moved)
		}
		if v := tx.Bucket([]byte(BucketChainLinks)).Get(append(append([]byte(nil), head...), 0, 0, 0, 0, 0, 0, 0, 1)); !bytes.Equal(v, []byte("a link")) {
			t.Errorf("the link holds %q", v)
		}
		for _, b := range []string{bucketChainHeads, bucketIdempotencyOrder} {
			if n := tx.Bucket([]byte(b)).Count(); n != 0 {
				t.Errorf("%s still holds %d keys", b, n)
			}
		}
		if v := tx.Bucket([]byte(BucketMeta)).Get([]byte("idempotency_seq")); v != nil {
			t.Errorf("idempotency_seq left in meta")
		}
		return nil
	})
}
