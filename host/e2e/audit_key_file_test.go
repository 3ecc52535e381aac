package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Two servers with their own data dirs (two machines of one cluster) and
// CAIRN_AUDIT_KEY_FILE naming one key file sign with one key: the proof
// resource a plugin signs on one and the bundle `cairn audit export` signs
// verify with the verifier key the other prints, and neither data dir
// holds a key of its own.
func TestAuditKeyFileIsSharedBetweenDataDirs(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "secrets", "cairn-audit.key")
	a, b := newWorkspace(t), newWorkspace(t)
	a.env = append(a.env, "CAIRN_AUDIT_KEY_FILE="+keyFile)
	b.env = append(b.env, "CAIRN_AUDIT_KEY_FILE="+keyFile)

	s := a.serve("CAIRN_PROJECT=web")
	id := taskID(t, s, map[string]any{"title": "Signed on A", "project": "web"})
	ok(t, s, "thought_record", map[string]any{"task_id": id, "type": "decision", "content": "one key for the cluster"})
	sess := ok(t, s, "audit_session_start", map[string]any{"task_id": id, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, s, "merkle_finalize", map[string]any{"session_id": sess})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, err := s.c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "cairn://proofs/" + sess}})
	if err != nil {
		t.Fatal(err)
	}
	s.close()
	resourceBundle := filepath.Join(a.root, "resource.proof.json")
	if err := os.WriteFile(resourceBundle, []byte(rc.Contents[0].(mcp.TextResourceContents).Text), 0o600); err != nil {
		t.Fatal(err)
	}
	if !json.Valid([]byte(rc.Contents[0].(mcp.TextResourceContents).Text)) {
		t.Fatal("the proof resource is not JSON")
	}
	cliBundle := filepath.Join(a.root, "cli.proof.json")
	if code, _, errOut := runCairn(t, a, "", nil, "audit", "export", sess, "-o", cliBundle); code != 0 {
		t.Fatalf("audit export on A: %d %s", code, errOut)
	}

	code, pubA, errOut := runCairn(t, a, "", nil, "audit", "pubkey")
	if code != 0 {
		t.Fatalf("audit pubkey on A: %d %s", code, errOut)
	}
	code, pubB, errOut := runCairn(t, b, "", nil, "audit", "pubkey")
	if code != 0 {
		t.Fatalf("audit pubkey on B: %d %s", code, errOut)
	}
	if pubA != pubB || strings.Count(pubB, "+") < 2 {
		t.Fatalf("A prints %q, B prints %q: one key file must give one verifier key", pubA, pubB)
	}
	for _, p := range []string{resourceBundle, cliBundle} {
		if code, out, errOut := runCairn(t, b, "", nil, "audit", "verify", p, "--key", strings.TrimSpace(pubB)); code != 0 || !strings.HasPrefix(out, "OK") {
			t.Errorf("B's key does not verify %s: %d %s %s", filepath.Base(p), code, out, errOut)
		}
		// Without --key, B verifies with its own (the shared) key.
		if code, out, errOut := runCairn(t, b, "", nil, "audit", "verify", p); code != 0 || !strings.HasPrefix(out, "OK") {
			t.Errorf("B without --key does not verify %s: %d %s %s", filepath.Base(p), code, out, errOut)
		}
	}
	for _, w := range []*workspace{a, b} {
		if _, err := os.Stat(filepath.Join(w.dataDir(), "audit-signing.key")); err == nil {
			t.Errorf("%s holds a key of its own although CAIRN_AUDIT_KEY_FILE names another", w.dataDir())
		}
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("shared key file: %v %v", fi, err)
	}
}
