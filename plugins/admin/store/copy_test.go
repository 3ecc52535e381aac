package store

import (
	"context"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Every pair of admin.db reaches the database, readable through the
// PostgreSQL store; a second copy into it is refused naming "to"; a data
// dir without admin.db has nothing to copy.
func TestCopyToPostgres(t *testing.T) {
	dir, dsn := t.TempDir(), pgtest.DSN(t)
	src, err := Open(dir+"/"+FileName, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	if err := src.Update(func(tx Tx) error {
		for i := 0; i < 3; i++ {
			n, err := NextSeq(tx, "keys")
			if err != nil {
				return err
			}
			seqs = append(seqs, n)
		}
		return tx.Bucket([]byte(BucketKeys)).Put([]byte("k"), nil)
	}); err != nil {
		t.Fatal(err)
	}
	src.Close()
	rep, err := CopyToPostgres(context.Background(), dir, dsn)
	if err != nil || !rep.Found || rep.Pairs < 3 {
		t.Fatalf("copy: %+v %v", rep, err)
	}
	dst, err := OpenPostgres(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := dst.Update(func(tx Tx) error {
		if v := tx.Bucket([]byte(BucketKeys)).Get([]byte("k")); v == nil || len(v) != 0 {
			t.Errorf("an empty value copied as %v", v)
		}
		n, err := NextSeq(tx, "keys")
		if n != seqs[2]+1 {
			t.Errorf("counter after copy hands out %d, want %d", n, seqs[2]+1)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = CopyToPostgres(context.Background(), dir, dsn)
	if e, ok := errs.As(err); !ok || e.Details["field"] != "to" {
		t.Fatalf("second copy: %v", err)
	}
	if rep, err := CopyToPostgres(context.Background(), t.TempDir(), dsn); err != nil || rep.Found {
		t.Fatalf("copy of a data dir without admin.db: %+v %v", rep, err)
	}
}
