package core

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/doctable"
	"github.com/cairn-mcp/cairn/sdk"
)

// Identity cannot be borrowed (docs/decisions.md D35): the core rows of
// docs/security.md's identity table, each cell run against core's tools.
// The admin rows are TestIdentityTable's (plugins/admin).

// coreIdentityScenarios are the core rows in Go: the user the action is
// about, the tool, and its arguments (a task T-1 exists).
var coreIdentityScenarios = map[string]struct {
	subject, tool string
	args          map[string]any
}{
	"start an audit session with U as auditor": {"uma", "audit_session_start", map[string]any{"task_id": "T-1", "auditor_id": "uma"}},
}

func TestIdentityTableCore(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	rows, err := doctable.Read(filepath.Join(filepath.Dir(here), "..", "..", "docs", "security.md"), "identity-table")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if len(r) != 5 {
			t.Fatalf("identity table row %q has %d cells, want 5", r, len(r))
		}
		action, tool := r[0], strings.Trim(r[1], "`")
		if strings.HasPrefix(tool, "admin_") {
			continue // plugins/admin's TestIdentityTable
		}
		sc, ok := coreIdentityScenarios[action]
		if !ok {
			t.Errorf("row %q of docs/security.md has no scenario in coreIdentityScenarios", action)
			continue
		}
		seen[action] = true
		if sc.tool != tool {
			t.Errorf("row %q names %s, its scenario calls %s", action, tool, sc.tool)
			continue
		}
		callers := []struct {
			name string
			ctx  context.Context
		}{
			{"operator", sdk.WithCaller(context.Background(), sdk.Caller{ID: "root", Source: "env"})},
			{"own key", sdk.WithCaller(context.Background(), sdk.Caller{ID: sc.subject, Source: "api_key", Scopes: []string{"read", "write", "admin"}})},
			{"another user's key", sdk.WithCaller(context.Background(), sdk.Caller{ID: "olivia", Source: "api_key", Scopes: []string{"read", "write", "admin"}})},
		}
		for i, c := range callers {
			want := r[2+i]
			t.Run(action+"/"+c.name, func(t *testing.T) {
				p := startCore(t)
				if _, res := invoke(t, p, session("root", "web"), "task_create", `{"title":"audited","project":"web"}`); res.Err != nil {
					t.Fatal(res.Err)
				}
				raw, _ := json.Marshal(sc.args)
				out, res := invoke(t, p, c.ctx, sc.tool, string(raw))
				if want == "yes" {
					if res.Err != nil {
						t.Fatalf("refused, the table says yes: %d %+v", res.Status, res.Err)
					}
					if out["auditor_id"] != sc.args["auditor_id"] {
						t.Fatalf("auditor_id %v, want %v", out["auditor_id"], sc.args["auditor_id"])
					}
					return
				}
				required := strings.TrimSuffix(strings.TrimPrefix(want, "403 `"), "`")
				if res.Err == nil || res.Status != 403 || res.Err.Code != "ERR_FORBIDDEN" || res.Err.Details["required"] != required {
					t.Fatalf("want 403 ERR_FORBIDDEN required=%s, got %d %+v", required, res.Status, res.Err)
				}
			})
		}
	}
	for action := range coreIdentityScenarios {
		if !seen[action] {
			t.Errorf("scenario %q is not a row of docs/security.md's identity table", action)
		}
	}
}
