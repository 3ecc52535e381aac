package audit

import (
	"encoding/json"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"testing"

	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// audit_export's output travels as JSON from the plugin to the host, which
// signs it: after the trip it must still build a bundle that verifies.
func TestExportPartsSurviveJSONAndVerify(t *testing.T) {
	pgtest.EachStore(t, testExportPartsSurviveJSONAndVerify)
}

func testExportPartsSurviveJSONAndVerify(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	e.think(parent, "chose the parser <&> \u2028 ✓")
	sess, _ := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor"})

	_, err := e.audit.ExportParts(ExportInput{SessionID: sess.SessionID})
	wantErr(t, err, 409, errs.Conflict, "", "")
	_, err = e.audit.ExportParts(ExportInput{SessionID: "A-99"})
	wantErr(t, err, 404, errs.SessionNotFound, "", "")

	fin, _ := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID})
	out, err := e.audit.ExportParts(ExportInput{SessionID: sess.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back ExportOutput
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Root != fin.MerkleRoot || uint64(len(back.Records)) != fin.LeafCount || back.Session.SessionID != sess.SessionID {
		t.Fatalf("exported root %s, %d records, session %s; finalize said %+v", back.Root, len(back.Records), back.Session.SessionID, fin)
	}
	signer, vkey, err := bundle.LoadOrCreateKey(bundle.KeyPath(t.TempDir(), ""), "cairn-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.BuildBundle(back.Session, back.Records, back.Root, signer)
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.VerifyBundle(b, vkey); err != nil {
		t.Fatalf("bundle built from the exported parts does not verify: %v", err)
	}
}

// audit_session_list pages newest first, with each session's scope and
// state, and refuses a page size out of range naming the field.
func TestListSessionsNewestFirst(t *testing.T) { pgtest.EachStore(t, testListSessionsNewestFirst) }

func testListSessionsNewestFirst(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	e.task(parent)
	e.think(parent, "p")
	for _, sc := range []string{ScopeShallow, ScopeDeep, ScopeShallow} {
		if _, err := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor", Scope: str(sc)}); err != nil {
			t.Fatal(err)
		}
	}
	fin, _ := e.audit.Finalize(FinalizeInput{SessionID: "A-2"})
	two := 2
	out, err := e.audit.ListSessions(SessionListInput{Limit: &two})
	if err != nil {
		t.Fatal(err)
	}
	if out.TotalCount != 3 || len(out.Sessions) != 2 || out.Sessions[0].SessionID != "A-3" || out.Sessions[1].SessionID != "A-2" {
		t.Fatalf("first page %+v", out)
	}
	if s := out.Sessions[1]; !s.IsFinalized || s.MerkleRoot != fin.MerkleRoot || s.Scope != ScopeDeep || s.AuditorID != "auditor" {
		t.Fatalf("A-2 %+v", s)
	}
	out, _ = e.audit.ListSessions(SessionListInput{Limit: &two, Offset: &two})
	if len(out.Sessions) != 1 || out.Sessions[0].SessionID != "A-1" || out.Sessions[0].IsFinalized || out.Sessions[0].Scope != ScopeShallow {
		t.Fatalf("second page %+v", out)
	}
	one := "A-2"
	if got, err := e.audit.ListSessions(SessionListInput{SessionID: &one}); err != nil || len(got.Sessions) != 1 || got.Sessions[0].Scope != ScopeDeep || !got.Sessions[0].IsFinalized {
		t.Fatalf("session A-2 alone: %+v %v", got, err)
	}
	missing := "A-9"
	_, err = e.audit.ListSessions(SessionListInput{SessionID: &missing})
	wantErr(t, err, 404, errs.SessionNotFound, "", "")
	for _, bad := range []int{0, SessionListMax + 1} {
		_, err := e.audit.ListSessions(SessionListInput{Limit: &bad})
		wantErr(t, err, 400, errs.InvalidInput, "limit", "maximum")
	}
}
