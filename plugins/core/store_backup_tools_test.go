package core

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/cairn-mcp/cairn/internal/boltcheck"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// The core area checks the store it serves on a live copy, backs it up,
// and its check of the backup finds a chain link changed in the copy.
func TestStoreCheckBackupAndTamper(t *testing.T) {
	p := startCore(t)
	ctx := session("agent", "web")
	if _, res := invoke(t, p, ctx, "project_register", `{"slug":"web"}`); res.Err != nil {
		t.Fatal(res.Err)
	}
	out, res := invoke(t, p, ctx, "task_create", `{"title":"one","project":"web"}`)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	id := out["task_id"].(string)
	for i := 0; i < 3; i++ {
		if _, res := invoke(t, p, ctx, "thought_record", fmt.Sprintf(`{"task_id":%q,"type":"decision","content":"thought %d"}`, id, i)); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	dataDir := p.Config().DataDir
	check := func(from string) boltcheck.AreaReport {
		t.Helper()
		in, _ := json.Marshal(boltcheck.CheckInput{From: from})
		_, res := invoke(t, p, ctx, "core_store_check", string(in))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		var rep boltcheck.AreaReport
		if err := json.Unmarshal(res.Output, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	live := check(dataDir)
	if !live.Live || !live.Found || len(live.Problems) != 0 || live.Counts["tasks"] != 1 || live.Counts["chain_links"] < 4 {
		t.Fatalf("live check: %+v", live)
	}

	dir := t.TempDir()
	in, _ := json.Marshal(boltcheck.BackupInput{To: dir})
	_, res = invoke(t, p, ctx, "core_store_backup", string(in))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var b boltcheck.BackedUp
	if err := json.Unmarshal(res.Output, &b); err != nil || b.File != store.FileName || len(b.SHA256) != 64 || b.TxID == 0 {
		t.Fatalf("backup: %+v %v", b, err)
	}
	if rep := check(dir); rep.Live || len(rep.Problems) != 0 || rep.Counts["tasks"] != 1 {
		t.Fatalf("check of the backup: %+v", rep)
	}

	// Change one stored link's content in the copy: its chain breaks.
	db, err := bolt.Open(filepath.Join(dir, store.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(store.BucketChainLinks))
		c := bk.Cursor()
		c.Last()         // the thought chain's head
		k, v := c.Prev() // its last link
		changed := []byte(strings.Replace(string(v), "thought 2", "thought X", 1))
		if string(changed) == string(v) {
			return fmt.Errorf("the last link does not hold the last thought: %q", v)
		}
		return bk.Put(append([]byte{}, k...), changed)
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep := check(dir)
	if len(rep.Problems) == 0 {
		t.Fatal("a changed chain link was not found")
	}
	if p := rep.Problems[0]; p.Bucket != store.BucketChainLinks || !strings.Contains(p.Record, id) {
		t.Fatalf("problem %+v does not name the chain bucket and task %s", p, id)
	}

	// A serving area refuses to restore under itself.
	rin, _ := json.Marshal(boltcheck.RestoreInput{From: dir, To: dataDir})
	if _, res := invoke(t, p, ctx, "core_store_restore", string(rin)); res.Err == nil || res.Err.Status != 409 {
		t.Fatalf("restore under a serving area: %+v", res.Err)
	}
}
