package audit

import (
	"encoding/json"
	"testing"

	"github.com/cairn-mcp/cairn/plugins/core/trail/bundle"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// audit_export's output travels as JSON from the plugin to the host, which
// signs it: after the trip it must still build a bundle that verifies.
func TestExportPartsSurviveJSONAndVerify(t *testing.T) {
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
	signer, vkey, err := bundle.LoadOrCreateKey(t.TempDir(), "cairn-test")
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
