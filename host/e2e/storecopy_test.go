package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// `cairn store copy` moves a bbolt data dir into PostgreSQL:
// refused while a server holds the data dir, it copies core, admin and
// sdd state once the server stopped, refuses to copy into the same
// database again, and a server started on the database serves the same
// tasks, thoughts, finalized root, key and lease.
func TestStoreCopyThenServeFromPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	env := []string{"CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_LOG_LEVEL=warn", "CAIRN_PROJECT=move"}
	w := newWorkspace(t)
	s := w.serve(env...)
	task := okCall(t, s, "task_create", map[string]any{"title": "carried over", "project": "move"})["task_id"].(string)
	okCall(t, s, "task_create", map[string]any{"title": "second", "project": "move"})
	for _, c := range []string{"first", "second"} {
		okCall(t, s, "thought_record", map[string]any{"task_id": task, "type": "decision", "content": c})
	}
	sid := okCall(t, s, "audit_session_start", map[string]any{"task_id": task, "auditor_id": "reviewer"})["session_id"].(string)
	root := okCall(t, s, "merkle_finalize", map[string]any{"session_id": sid})["merkle_root"].(string)
	key := okCall(t, s, "admin_key_create", map[string]any{"name": "moved"})["id"].(string)
	lease := okCall(t, s, "sdd_lease", map[string]any{"action": "issue", "taskId": task})["lease"].(map[string]any)["leaseId"].(string)

	code, _, errOut := runCairn(t, w, "", env, "store", "copy", "--from", w.dataDir(), "--to", dsn)
	if code == 0 || !strings.Contains(errOut, "stop it") {
		t.Fatalf("copy while the server runs: %d %s", code, errOut)
	}
	s.close()
	code, out, errOut := runCairn(t, w, "", env, "store", "copy", "--from", w.dataDir(), "--to", dsn)
	var rep struct {
		Areas struct {
			Core struct {
				Tasks         int `json:"tasks"`
				ChainLinks    int `json:"chain_links"`
				Sessions      int `json:"sessions"`
				RootsVerified int `json:"roots_verified"`
			} `json:"core"`
			Admin struct{ Pairs int }  `json:"admin"`
			SDD   struct{ Found bool } `json:"sdd"`
		} `json:"areas"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("copy: %d %s %s", code, out, errOut)
	}
	c := rep.Areas.Core
	// Two tasks with one creation event each, two thoughts; one session.
	if c.Tasks != 2 || c.ChainLinks != 4 || c.Sessions != 1 || c.RootsVerified != 1 || rep.Areas.Admin.Pairs == 0 || !rep.Areas.SDD.Found {
		t.Fatalf("copy report: %s", out)
	}
	code, _, errOut = runCairn(t, w, "", env, "store", "copy", "--from", w.dataDir(), "--to", dsn)
	if code == 0 || !strings.Contains(errOut, "empty database") {
		t.Fatalf("copy into a used database: %d %s", code, errOut)
	}

	pg := newWorkspace(t)
	s2 := pg.serve(append(env, "CAIRN_STORE="+dsn)...)
	got := okCall(t, s2, "task_get", map[string]any{"task_id": task})
	if got["title"] != "carried over" {
		t.Fatalf("task_get on PostgreSQL: %v", got)
	}
	if l := okCall(t, s2, "task_list", map[string]any{"project": "move"}); l["total_count"].(float64) != 2 {
		t.Fatalf("task_list on PostgreSQL: %v", l)
	}
	if r := okCall(t, s2, "merkle_root", map[string]any{"session_id": sid}); r["merkle_root"] != root {
		t.Fatalf("merkle_root on PostgreSQL %v, want %s", r, root)
	}
	if v := okCall(t, s2, "audit_verify_chain", map[string]any{"session_id": sid}); v["chain_valid"] != true {
		t.Fatalf("audit_verify_chain on PostgreSQL: %v", v)
	}
	if keys, _ := json.Marshal(okCall(t, s2, "admin_key_list", map[string]any{})); !strings.Contains(string(keys), key) {
		t.Fatalf("admin_key_list on PostgreSQL lacks %s: %s", key, keys)
	}
	okCall(t, s2, "sdd_lease", map[string]any{"action": "return", "leaseId": lease})
	// New writes continue the copied numbering.
	if n := okCall(t, s2, "task_create", map[string]any{"title": "third", "project": "move"}); n["task_id"] != "T-3" {
		t.Fatalf("next task on PostgreSQL: %v", n)
	}
	h := okCall(t, s2, "server_health", map[string]any{})
	if b, _ := json.Marshal(h); !strings.Contains(string(b), `"kind":"postgres"`) || !strings.Contains(string(b), "latency_ms") {
		t.Fatalf("server_health on PostgreSQL: %s", b)
	}
}
