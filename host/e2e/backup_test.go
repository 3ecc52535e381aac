package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// `cairn backup` taken while a session writes through the shared daemon
// (task_create and thought_record in a loop) restores, with `cairn
// restore`, to a store whose chains and roots all verify and which holds
// every write acknowledged before the backup began. Restore refuses while
// the daemon serves, and refuses a backup whose file changed.
func TestBackupUnderWriteLoadRestores(t *testing.T) {
	if suiteOnPostgres {
		t.Skip("bbolt files only")
	}
	env := []string{"CAIRN_DAEMON=on", "CAIRN_PROJECT=web", "CAIRN_LOG_LEVEL=warn", "CAIRN_TOOLSETS=core,sdd,admin"}
	w := newWorkspace(t)
	s := w.serve(env...)
	first := okCall(t, s, "task_create", map[string]any{"title": "sealed", "project": "web"})["task_id"].(string)
	okCall(t, s, "thought_record", map[string]any{"task_id": first, "type": "decision", "content": "sealed thought"})
	sid := okCall(t, s, "audit_session_start", map[string]any{"task_id": first, "auditor_id": "reviewer"})["session_id"].(string)
	root := okCall(t, s, "merkle_finalize", map[string]any{"session_id": sid})["merkle_root"].(string)
	okCall(t, s, "admin_key_create", map[string]any{"name": "kept"})
	okCall(t, s, "sdd_lease", map[string]any{"action": "issue", "taskId": first})

	// The writer records the writes acknowledged before the backup
	// began: an answer read while begun was still false.
	var begun atomic.Bool
	var mu sync.Mutex
	var before, thoughtsBefore []string // tasks, and tasks whose thought, were acknowledged before the backup began
	stop := make(chan struct{})
	done := make(chan error, 1)
	wrote := make(chan struct{}, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			res := s.call("task_create", map[string]any{"title": "load", "project": "web"})
			if res.IsError {
				done <- errorf("task_create: %v", res.Content)
				return
			}
			id := structured(t, res)["task_id"].(string)
			if !begun.Load() {
				mu.Lock()
				before = append(before, id)
				mu.Unlock()
			}
			if res := s.call("thought_record", map[string]any{"task_id": id, "type": "decision", "content": "under load"}); res.IsError {
				done <- errorf("thought_record: %v", res.Content)
				return
			}
			if !begun.Load() {
				mu.Lock()
				thoughtsBefore = append(thoughtsBefore, id)
				mu.Unlock()
			}
			select {
			case wrote <- struct{}{}:
			default:
			}
		}
	}()
	<-wrote // the writer is going
	<-wrote
	dir := filepath.Join(t.TempDir(), "backup")
	begun.Store(true)
	code, out, errOut := runCairn(t, w, "", env, "backup", dir)
	<-wrote // writes went on during and after the backup
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("backup exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var man struct {
		ViaDaemon bool `json:"via_daemon"`
		Areas     []struct {
			Area, File, SHA256 string
			Bytes              int64
		} `json:"areas"`
	}
	if err := json.Unmarshal([]byte(out), &man); err != nil {
		t.Fatalf("backup output %q: %v", out, err)
	}
	if !man.ViaDaemon || len(man.Areas) != 3 {
		t.Fatalf("manifest: %+v", man)
	}
	for _, a := range man.Areas {
		if a.File == "" || len(a.SHA256) != 64 {
			t.Errorf("area %s backed up nothing: %+v", a.Area, a)
		}
	}

	// Restore refuses while the daemon serves the data dir.
	if code, _, errOut := runCairn(t, w, "", env, "restore", dir); code == 0 || !strings.Contains(errOut, "cairn stop") {
		t.Fatalf("restore beside a running daemon: exit %d, %s", code, errOut)
	}

	// Into a fresh workspace: check, restore, check, serve.
	s.close()
	w2 := newWorkspace(t)
	env2 := append([]string{}, env...)
	if code, out, errOut := runCairn(t, w2, "", env2, "restore", dir); code != 0 {
		t.Fatalf("restore exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = runCairn(t, w2, "", env2, "store", "check", "--json")
	if code != 0 {
		t.Fatalf("check of the restored stores: exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct {
		OK    bool `json:"ok"`
		Areas []struct {
			Area   string         `json:"area"`
			Found  bool           `json:"found"`
			Counts map[string]int `json:"counts"`
		} `json:"areas"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	want := append([]string{first}, before...)
	withThought := thoughtsBefore
	mu.Unlock()
	if len(withThought) < 2 {
		t.Fatalf("only %d writes were acknowledged before the backup began", len(withThought))
	}
	for _, a := range rep.Areas {
		if !a.Found {
			t.Errorf("restored %s store not found", a.Area)
		}
		if a.Area == "core" && (a.Counts["tasks"] < len(want) || a.Counts["roots_verified"] != 1) {
			t.Errorf("restored core store verified %v, want at least %d tasks and the one frozen root", a.Counts, len(want))
		}
	}
	s2 := w2.serve(env...)
	for _, id := range want {
		got := okCall(t, s2, "task_get", map[string]any{"task_id": id})
		if got["task_id"] != id {
			t.Fatalf("task_get %s: %v", id, got)
		}
	}
	for _, id := range withThought {
		th := okCall(t, s2, "thought_record_list", map[string]any{"task_id": id})
		if b, _ := json.Marshal(th); !strings.Contains(string(b), "under load") {
			t.Fatalf("the thought acknowledged on %s before the backup is missing: %s", id, b)
		}
	}
	for _, id := range want {
		if v := okCall(t, s2, "audit_verify_chain", map[string]any{"task_id": id}); v["integrity_score"] != float64(100) {
			t.Fatalf("restored chains of %s: %v", id, v)
		}
	}
	if got := okCall(t, s2, "merkle_root", map[string]any{"session_id": sid}); got["merkle_root"] != root {
		t.Fatalf("frozen root %v, want %s", got["merkle_root"], root)
	}
	s2.close()

	// A backup whose file changed is refused before anything moves.
	core := filepath.Join(dir, "core.db")
	data, _ := os.ReadFile(core)
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(core, data, 0o600); err != nil {
		t.Fatal(err)
	}
	w2.stopDaemon()
	if code, _, errOut := runCairn(t, w2, "", env2, "restore", dir); code == 0 || !strings.Contains(errOut, "sha256") {
		t.Fatalf("restore of a changed backup: exit %d, %s", code, errOut)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
