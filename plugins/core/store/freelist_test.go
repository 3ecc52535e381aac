package store

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
)

// fileMeta reads the valid meta page with the highest transaction id of
// the bbolt file at path: its transaction id and whether it names a
// freelist page (bbolt's on-disk format, in the machine's byte order).
func fileMeta(t *testing.T, path string) (txid uint64, freelist bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const hdr = 16
	ne := binary.NativeEndian
	ps := int(ne.Uint32(raw[hdr+8:]))
	found := false
	for i := 0; i < 2; i++ {
		m := raw[i*ps : i*ps+hdr+64]
		h := fnv.New64a()
		_, _ = h.Write(m[hdr : hdr+56])
		if h.Sum64() != ne.Uint64(m[hdr+56:]) {
			continue
		}
		if id := ne.Uint64(m[hdr+48:]); !found || id > txid {
			found, txid, freelist = true, id, ne.Uint64(m[hdr+32:]) != ^uint64(0)
		}
	}
	if !found {
		t.Fatalf("%s: no valid meta page", path)
	}
	return txid, freelist
}

// A store writes no freelist while it runs (NoFreelistSync), so a crash
// leaves the next open to rebuild it from every page; a store that closes
// writes it, and the next open reads it. An open of a store at the current
// version commits nothing.
func TestCloseWritesTheFreelistAndOpenCommitsNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(tx kv.Tx) error {
		return tx.Bucket([]byte(BucketMeta)).Put([]byte("probe"), make([]byte, 3000))
	}); err != nil {
		t.Fatal(err)
	}
	if _, freelist := fileMeta(t, path); freelist {
		t.Fatal("a running store's last commit wrote a freelist; it runs with NoFreelistSync")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	closedTx, freelist := fileMeta(t, path)
	if !freelist {
		t.Fatal("a closed store holds no freelist: its next open reads every page")
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tx, _ := fileMeta(t, path); tx != closedTx {
		t.Errorf("opening a current store committed (transaction %d, was %d)", tx, closedTx)
	}
	if err := st.View(func(tx kv.Tx) error {
		if len(tx.Bucket([]byte(BucketMeta)).Get([]byte("probe"))) != 3000 {
			t.Error("the value written before the close is gone")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
