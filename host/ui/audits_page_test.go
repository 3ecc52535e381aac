package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/seam"
)

// auditBackend answers the audit pages' tools for one session, open or
// finalized, whose three records all verify.
type auditBackend struct {
	*recorder
	finalized bool
}

const openRoot = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func (b auditBackend) Call(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	out := ""
	switch name {
	case "merkle_root":
		fin := "false"
		if b.finalized {
			fin = "true"
		}
		out = `{"session_id":"A-1","merkle_root":"` + openRoot + `","is_finalized":` + fin + `,"leaf_count":3,"tree_depth":2,"as_of":"2026-11-21T11:30:00Z"}`
	case "audit_verify_chain":
		out = `{"chain_valid":true,"total_records":3,"verified_records":3,"integrity_score":100,"trace":[{"chain":"event","task_id":"T-1","position":1,"record_id":"e1","stored_hash":"aa","recomputed_hash":"aa","verdict":"ok"}]}`
	case SessionListTool:
		out = `{"sessions":[{"session_id":"A-1","task_id":"T-1","auditor_id":"reviewer","scope":"shallow","started_at":"2026-11-21T11:00:00Z"}],"total_count":1}`
	default:
		return b.recorder.Call(ctx, name, args, c)
	}
	return &seam.Result{Output: json.RawMessage(out)}
}

func (b auditBackend) CallInternal(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	return b.Call(ctx, name, args, c)
}

// An open session never reads as sealed: no root, no score, and what
// finalizing would do; a finalized one shows both (docs/decisions.md D12, D25).
func TestOpenAuditSessionShowsNoRootOrScore(t *testing.T) {
	for _, fin := range []bool{false, true} {
		s, err := Start(auditBackend{newRecorder(), fin}, Config{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		c := login(t, s, Grant{Person: "alice"})
		for _, path := range []string{"/view/audits/A-1", "/view/audits"} {
			body := getPage(t, c, base(s)+path)
			main := body[strings.Index(body, "<main"):]
			sealed := strings.Contains(main, "100%") || strings.Contains(main, openRoot[:12])
			if sealed != fin {
				t.Errorf("finalized=%v %s: shows a root or a score: %v\n%s", fin, path, sealed, main)
			}
			if !strings.Contains(main, `data-session="A-1"`) && !strings.Contains(main, "Audit session A-1") {
				t.Errorf("%s does not show session A-1:\n%s", path, main)
			}
			open := strings.Contains(main, `data-state="open"`) && strings.Contains(main, "Open: 3 records so far")
			if path == "/view/audits/A-1" && open == fin {
				t.Errorf("finalized=%v: the session page says open: %v\n%s", fin, open, main)
			}
		}
		s.Stop()
	}
}
