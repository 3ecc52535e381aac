package e2e

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// The decision trail end to end: thoughts, a deep audit, verification,
// finalization, the frozen root, tampering, and the portable proof through
// the `cairn audit` CLI.

func ok(t *testing.T, s *session, tool string, args map[string]any) map[string]any {
	t.Helper()
	res := s.call(tool, args)
	if res.IsError {
		t.Fatalf("%s %v: %v", tool, args, structured(t, res))
	}
	return structured(t, res)
}

func TestDecisionTrailEndToEnd(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web", "CAIRN_AGENT_ID=agent-a")
	tools := s.tools()
	parent := taskID(t, s, map[string]any{"title": "Payments", "project": "web"})
	child := taskID(t, s, map[string]any{"title": "Refunds", "project": "web", "parent_id": parent})
	update(t, s, map[string]any{"task_id": child, "status": "todo"})

	res := s.call("thought_record", map[string]any{"task_id": parent, "type": "decision", "content": "Use idempotency keys <&> \u2028 ✓", "branch": "main", "tests_run": []string{"go test ./..."}, "metadata": map[string]any{"pr": 7}})
	if res.IsError || metaStatus(res) != 201 {
		t.Fatalf("thought_record: %v status %v", structured(t, res), metaStatus(res))
	}
	first := structured(t, res)
	validateAgainst(t, w, tools["thought_record"], first)
	if first["chain_position"] != float64(1) || first["previous_hash"] != nil || first["recorded_by"] != "agent-a" || !strings.HasPrefix(first["thought_id"].(string), "Θ-") {
		t.Fatalf("first thought %v", first)
	}
	second := ok(t, s, "thought_record", map[string]any{"task_id": parent, "type": "risk", "content": "refund race"})
	if second["previous_hash"] != first["hash"] || second["chain_position"] != float64(2) {
		t.Fatalf("second thought does not link: %v", second)
	}
	ok(t, s, "thought_record", map[string]any{"task_id": child, "type": "discovery", "content": "gateway retries twice"})

	list := ok(t, s, "thought_record_list", map[string]any{"task_id": parent, "verify_chain": true})
	validateAgainst(t, w, tools["thought_record_list"], list)
	if list["thought_count"] != float64(2) || list["chain_valid"] != true || len(list["invalid_links"].([]any)) != 0 {
		t.Fatalf("list %v", list)
	}
	got := ok(t, s, "task_get", map[string]any{"task_id": parent, "include_thought_trail": true})
	if trail := got["thought_trail"].([]any); len(trail) != 2 || trail[0] != first["thought_id"] {
		t.Fatalf("thought_trail %v", got["thought_trail"])
	}

	res = s.call("audit_session_start", map[string]any{"task_id": parent, "auditor_id": "reviewer", "scope": "deep", "reason": "release"})
	if res.IsError || metaStatus(res) != 201 {
		t.Fatalf("audit_session_start %v", structured(t, res))
	}
	sess := structured(t, res)["session_id"].(string)
	bySession := ok(t, s, "thought_record_list", map[string]any{"session_id": sess})
	if bySession["thought_count"] != float64(3) {
		t.Fatalf("deep session lists the sub-task's thoughts too: %v", bySession)
	}
	v := ok(t, s, "audit_verify_chain", map[string]any{"session_id": sess, "full_trace": true})
	validateAgainst(t, w, tools["audit_verify_chain"], v)
	// 2 task_created + 1 task_updated + 3 thoughts.
	if v["chain_valid"] != true || v["total_records"] != float64(6) || v["integrity_score"] != float64(100) || len(v["trace"].([]any)) != 6 {
		t.Fatalf("verify %v", v)
	}
	open1 := ok(t, s, "merkle_root", map[string]any{"session_id": sess})
	fin := ok(t, s, "merkle_finalize", map[string]any{"session_id": sess})
	validateAgainst(t, w, tools["merkle_finalize"], fin)
	if fin["merkle_root"] != open1["merkle_root"] || fin["leaf_count"] != float64(6) || fin["tree_depth"] != float64(3) || fin["frozen"] != true {
		t.Fatalf("finalize %v vs open root %v", fin, open1)
	}
	code, status, field := errorOf(t, s, "merkle_finalize", map[string]any{"session_id": sess})
	if code != "ERR_ALREADY_FINALIZED" || status != 409 || field != "session_id" {
		t.Fatalf("second finalize: %s %v %v", code, status, field)
	}
	other := ok(t, s, "audit_session_start", map[string]any{"task_id": parent, "auditor_id": "reviewer", "scope": "deep"})["session_id"].(string)
	before := ok(t, s, "merkle_root", map[string]any{"session_id": other})

	ok(t, s, "thought_record", map[string]any{"task_id": child, "type": "reflection", "content": "after the seal"})
	frozen := ok(t, s, "merkle_root", map[string]any{"session_id": sess})
	moved := ok(t, s, "merkle_root", map[string]any{"session_id": other})
	if frozen["merkle_root"] != fin["merkle_root"] || frozen["is_finalized"] != true {
		t.Fatalf("frozen root changed: %v", frozen)
	}
	if moved["merkle_root"] == before["merkle_root"] || moved["is_finalized"] != false {
		t.Fatalf("open root did not move: %v → %v", before, moved)
	}

	for _, c := range []struct {
		tool  string
		args  map[string]any
		code  string
		state float64
	}{
		{"thought_record", map[string]any{"task_id": "T-999", "type": "decision", "content": "x"}, "ERR_TASK_NOT_FOUND", 404},
		{"thought_record", map[string]any{"task_id": parent, "type": "decision", "content": ""}, "ERR_INVALID_INPUT", 400},
		{"thought_record_list", map[string]any{"task_id": "T-999"}, "ERR_TASK_NOT_FOUND", 404},
		{"thought_record_list", map[string]any{}, "ERR_INVALID_INPUT", 400},
		{"audit_session_start", map[string]any{"task_id": "T-999", "auditor_id": "x"}, "ERR_TASK_NOT_FOUND", 404},
		{"audit_verify_chain", map[string]any{}, "ERR_INVALID_INPUT", 400},
		{"audit_verify_chain", map[string]any{"session_id": "A-999"}, "ERR_NOT_FOUND", 404},
		{"merkle_finalize", map[string]any{"session_id": "A-999"}, "ERR_SESSION_NOT_FOUND", 404},
		{"merkle_root", map[string]any{"session_id": "A-999"}, "ERR_SESSION_NOT_FOUND", 404},
	} {
		res := s.call(c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s %v: want %s", c.tool, c.args, c.code)
			continue
		}
		body := structured(t, res)
		validateAgainst(t, w, tools[c.tool], body)
		if e := body["error"].(map[string]any); e["code"] != c.code || metaStatus(res) != c.state {
			t.Errorf("%s %v: %v %v, want %s %v", c.tool, c.args, e["code"], metaStatus(res), c.code, c.state)
		}
	}
	s.close()

	// The portable proof: export, verify with the printed key, and fail on a
	// rewritten record.
	code2, pub, errOut := runCairn(t, w, "", nil, "audit", "pubkey")
	if code2 != 0 || strings.Count(pub, "+") < 2 {
		t.Fatalf("audit pubkey: %d %q %s", code2, pub, errOut)
	}
	bundlePath := filepath.Join(w.root, "proof.json")
	if code2, _, errOut = runCairn(t, w, "", nil, "audit", "export", sess, "-o", bundlePath); code2 != 0 {
		t.Fatalf("audit export: %d %s", code2, errOut)
	}
	if code2, out, errOut := runCairn(t, w, "", nil, "audit", "verify", bundlePath, "--key", strings.TrimSpace(pub)); code2 != 0 || !strings.HasPrefix(out, "OK") {
		t.Fatalf("audit verify: %d %s %s", code2, out, errOut)
	}
	raw, _ := os.ReadFile(bundlePath)
	var b map[string]any
	_ = json.Unmarshal(raw, &b)
	b["records"].([]any)[2].(map[string]any)["content"] = "rewritten"
	forged, _ := json.Marshal(b)
	forgedPath := filepath.Join(w.root, "forged.json")
	_ = os.WriteFile(forgedPath, forged, 0o644)
	if code2, _, errOut := runCairn(t, w, "", nil, "audit", "verify", forgedPath); code2 == 0 || !strings.Contains(errOut, "altered") {
		t.Fatalf("forged bundle: exit %d, stderr %s", code2, errOut)
	}
	if code2, _, errOut := runCairn(t, w, "", nil, "audit", "export", other); code2 == 0 || !strings.Contains(errOut, "finalize") {
		t.Fatalf("export of an open session: exit %d %s", code2, errOut)
	}
}

// Rewriting a stored record while the server is down: audit_verify_chain
// reports exactly that position, and export refuses to sign.
func TestTamperedStoreIsDetected(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web")
	id := taskID(t, s, map[string]any{"title": "Audit me", "project": "web"})
	var hashes []string
	for _, c := range []string{"one", "two", "three", "four"} {
		hashes = append(hashes, ok(t, s, "thought_record", map[string]any{"task_id": id, "type": "decision", "content": c})["hash"].(string))
	}
	sess := ok(t, s, "audit_session_start", map[string]any{"task_id": id, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, s, "merkle_finalize", map[string]any{"session_id": sess})
	s.close()

	// Rewrite the content of thought position 2 in the store file, as an
	// attacker editing the file would: link key = task number, 't',
	// position; the content "two" is stored as its raw bytes.
	db, err := bolt.Open(filepath.Join(w.dataDir(), "core.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 17)
	binary.BigEndian.PutUint64(key, 1)
	key[8] = 't'
	binary.BigEndian.PutUint64(key[9:], 2)
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("chain_links"))
		v := append([]byte(nil), b.Get(key)...)
		if bytes.Count(v, []byte("two")) != 1 {
			return fmt.Errorf("content not found once in the stored link %q", v)
		}
		return b.Put(key, bytes.Replace(v, []byte("two"), []byte("TWO"), 1))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s = w.serve("CAIRN_PROJECT=web")
	v := ok(t, s, "audit_verify_chain", map[string]any{"task_id": id})
	broken := v["broken_links"].([]any)
	if v["chain_valid"] != false || len(broken) != 1 || v["integrity_score"] != float64(80) { // 4 of 5 links verify
		t.Fatalf("verify after tampering: %v", v)
	}
	bl := broken[0].(map[string]any)
	if bl["position"] != float64(2) || bl["actual_hash"] != hashes[1] || bl["expected_hash"] == hashes[1] || bl["chain"] != "thought" {
		t.Fatalf("broken link %v, want position 2 with stored hash %s", bl, hashes[1])
	}
	l := ok(t, s, "thought_record_list", map[string]any{"task_id": id, "verify_chain": true})
	if links := l["invalid_links"].([]any); l["chain_valid"] != false || len(links) != 1 || links[0] != float64(2) {
		t.Fatalf("thought_record_list verify: %v", l)
	}
	s.close()
	if code, _, errOut := runCairn(t, w, "", nil, "audit", "export", sess, "-o", filepath.Join(w.root, "p.json")); code == 0 || !strings.Contains(errOut, "does not verify") {
		t.Fatalf("export of a tampered trail: exit %d %s", code, errOut)
	}
}
