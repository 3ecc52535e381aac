package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// Two cairn servers with separate data dirs on one PostgreSQL database
// (docs/decisions.md D26) share the admin and sdd state: a key made on one is
// listed by the other, a lease issued on one is returned on the other and
// cannot be returned twice; nothing lands in either data dir. `cairn
// migrate status` lists the pending migrations (the areas' and the host's
// own) before the first start and none after `cairn migrate apply`.
func TestPostgresStoreSharedByTwoServers(t *testing.T) {
	dsn := pgtest.DSN(t)
	env := []string{"CAIRN_STORE=" + dsn, "CAIRN_TOOLSETS=core,sdd,admin", "CAIRN_LOG_LEVEL=warn"}
	a, b := newWorkspace(t), newWorkspace(t)

	code, out, errOut := runCairn(t, a, "", env, "migrate", "status", "--json")
	if code != 0 || !strings.Contains(out, `"pending": [`) {
		t.Fatalf("migrate status before apply: %d %s %s", code, out, errOut)
	}
	code, out, errOut = runCairn(t, a, "", env, "migrate", "apply", "--json")
	var applied []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &applied) != nil || len(applied) != 4 {
		t.Fatalf("migrate apply: %d %s %s", code, out, errOut)
	}
	for _, st := range applied {
		if st["version"] != st["latest"] || st["version"].(float64) < 1 {
			t.Fatalf("after apply: %v", applied)
		}
	}
	code, out, _ = runCairn(t, a, "", env, "migrate", "status")
	if code != 0 || strings.Contains(out, "[") || !strings.Contains(out, "core") || !strings.Contains(out, "admin") || !strings.Contains(out, "sdd") || !strings.Contains(out, "host") {
		t.Fatalf("migrate status after apply: %d %s", code, out)
	}

	s1, s2 := a.serve(env...), b.serve(env...)
	key := okCall(t, s1, "admin_key_create", map[string]any{"name": "shared"})
	listed, _ := json.Marshal(okCall(t, s2, "admin_key_list", map[string]any{}))
	if !strings.Contains(string(listed), key["id"].(string)) {
		t.Fatalf("server 2 does not list the key made on server 1: %s", listed)
	}
	lease := okCall(t, s1, "sdd_lease", map[string]any{"action": "issue", "taskId": "item-1"})["lease"].(map[string]any)
	if ls := okCall(t, s2, "sdd_lease", map[string]any{"action": "list"}); len(ls["leases"].([]any)) != 1 {
		t.Fatalf("server 2 lists %v", ls)
	}
	okCall(t, s2, "sdd_lease", map[string]any{"action": "return", "leaseId": lease["leaseId"]})
	if res := s1.call("sdd_lease", map[string]any{"action": "return", "leaseId": lease["leaseId"]}); !res.IsError {
		t.Fatalf("server 1 returned a lease server 2 had returned: %v", structured(t, res))
	}
	for _, w := range []*workspace{a, b} {
		for _, f := range []string{"admin.db", filepath.Join("state", "sdd-state.json")} {
			if _, err := os.Stat(filepath.Join(w.dataDir(), f)); err == nil {
				t.Errorf("%s exists in a data dir although CAIRN_STORE is PostgreSQL", f)
			}
		}
	}
}
