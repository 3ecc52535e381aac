package audit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// A store written before chain heads moved beside their links (schema v7:
// heads in a bucket of their own) opens with every head moved, its chains
// verify as before, and appends continue each chain where it ended.
func TestChainHeadsMoveBesideTheirLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.OpenFor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	aud := New(st, Config{})
	svc := tasks.New(st, tasks.Config{OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail})
	if _, err := svc.AddProject("demo"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 30; i++ {
		out, err := svc.Create("alice", tasks.CreateInput{Title: fmt.Sprint("task ", i), Project: "demo"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.TaskID)
		for j := 0; j < i%4; j++ {
			if _, err := aud.Record("alice", RecordInput{TaskID: out.TaskID, Type: "decision", Content: fmt.Sprint("thought ", j)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := aud.CheckStore()
	if err != nil || len(before.Broken) != 0 {
		t.Fatalf("check before: %+v, %v", before.Broken, err)
	}
	_ = svc.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Back to the v7 layout, as an older cairn left it.
	db, err := bolt.Open(filepath.Join(dir, store.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	err = db.Update(func(tx *bolt.Tx) error {
		links := tx.Bucket([]byte(store.BucketChainLinks))
		heads, err := tx.CreateBucket([]byte("chain_heads"))
		if err != nil {
			return err
		}
		var keys [][]byte
		if err := links.ForEach(func(k, v []byte) error {
			if len(k) == 17 && binary.BigEndian.Uint64(k[9:]) == ^uint64(0) {
				keys = append(keys, append([]byte(nil), k...))
				return heads.Put(append([]byte(nil), k[:9]...), append([]byte(nil), v...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := links.Delete(k); err != nil {
				return err
			}
		}
		moved = len(keys)
		return tx.Bucket([]byte(store.BucketMeta)).Put([]byte("user_version"), store.U64(7))
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if moved != 30+22 { // an event chain per task, a thought chain for 22 of them
		t.Fatalf("%d heads written back to the v7 layout, want 52", moved)
	}

	st2, err := store.OpenFor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.UserVersion() != store.CurrentVersion {
		t.Fatalf("version %d after the upgrade", st2.UserVersion())
	}
	aud2 := New(st2, Config{})
	after, err := aud2.CheckStore()
	if err != nil || len(after.Broken) != 0 || after.ChainLinks != before.ChainLinks || after.Tasks != before.Tasks {
		t.Fatalf("check after the upgrade: %+v (before %+v), %v", after, before, err)
	}
	// The next thought of a task with three continues its chain at 4.
	out, err := aud2.Record("alice", RecordInput{TaskID: ids[3], Type: "decision", Content: "after the upgrade"})
	if err != nil {
		t.Fatal(err)
	}
	if out.ChainPosition != 4 {
		t.Fatalf("chain position %d after the upgrade, want 4", out.ChainPosition)
	}
	if err := st2.DB().View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("chain_heads")) != nil {
			return fmt.Errorf("the heads bucket is still there")
		}
		if !bytes.Equal(tx.Bucket([]byte(store.BucketMeta)).Get([]byte("user_version")), store.U64(uint64(store.CurrentVersion))) {
			return fmt.Errorf("user_version not brought up")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
