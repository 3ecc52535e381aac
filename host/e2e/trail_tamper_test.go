package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// Tampering the decision trail where the chain alone cannot see it — the
// last records deleted, or a chain rewritten with every hash recomputed —
// done with bbolt on the store file while the server is down, as an attacker
// with the file would. The real binary must report each.

// storedLink is a chain link as the core store writes it: sequence (8),
// raw hash (32), format byte, then uvarint-prefixed id, type, content,
// previous_hash ("" for null), recorded_at, recorded_by, and further fields
// kept as they are.
type storedLink struct {
	seq  []byte
	hash [32]byte
	str  [6]string
	tail []byte
}

func parseStoredLink(t *testing.T, v []byte) storedLink {
	t.Helper()
	if len(v) < 41 || v[40] != 1 {
		t.Fatalf("unexpected link layout %x", v)
	}
	l := storedLink{seq: append([]byte(nil), v[:8]...)}
	copy(l.hash[:], v[8:40])
	rest := v[41:]
	for i := range l.str {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			t.Fatalf("unexpected link layout %x", v)
		}
		l.str[i] = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	l.tail = append([]byte(nil), rest...)
	return l
}

func (l *storedLink) encode() []byte {
	out := append(append(append([]byte(nil), l.seq...), l.hash[:]...), 1)
	for _, s := range l.str {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	return append(out, l.tail...)
}

// rehash recomputes the hash by the specification's rule (ASCII text, so
// Go's encoder without HTML escaping writes what JSON.stringify writes).
func (l *storedLink) rehash(t *testing.T, taskID string) {
	q := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	prev := "null"
	if l.str[3] != "" {
		prev = q(l.str[3])
	}
	canon := `{"task_id":` + q(taskID) + `,"type":` + q(l.str[1]) + `,"content":` + q(l.str[2]) +
		`,"previous_hash":` + prev + `,"recorded_at":` + q(l.str[4]) + `,"recorded_by":` + q(l.str[5]) + `}`
	l.hash = sha256.Sum256([]byte(canon))
}

func thoughtKey(task uint64, pos int) []byte {
	k := make([]byte, 17)
	binary.BigEndian.PutUint64(k, task)
	k[8] = 't'
	binary.BigEndian.PutUint64(k[9:], uint64(pos))
	return k
}

// thoughtHeadKey is where the thought chain's head is kept: beside its
// links, under the largest position.
func thoughtHeadKey(task uint64) []byte { return thoughtKey(task, -1) }

func editStore(t *testing.T, w *workspace, fn func(links, heads *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(w.dataDir(), "core.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		return fn(tx.Bucket([]byte("chain_links")), tx.Bucket([]byte("chain_links")))
	}); err != nil {
		t.Fatal(err)
	}
}

// sealedTask makes a task with n thoughts and a finalized session over it.
func sealedTask(t *testing.T, s *session, n int) (id string, hashes []string, sess string) {
	id = taskID(t, s, map[string]any{"title": "Sealed", "project": "web"})
	for i := 1; i <= n; i++ {
		hashes = append(hashes, ok(t, s, "thought_record", map[string]any{"task_id": id, "type": "decision", "content": fmt.Sprintf("decision %d", i)})["hash"].(string))
	}
	sess = ok(t, s, "audit_session_start", map[string]any{"task_id": id, "auditor_id": "reviewer"})["session_id"].(string)
	ok(t, s, "merkle_finalize", map[string]any{"session_id": sess})
	return id, hashes, sess
}

func entries(v map[string]any) string {
	var out []string
	for _, b := range v["broken_links"].([]any) {
		m := b.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v@%v", m["chain"], m["reason"], m["position"]))
	}
	return strings.Join(out, "; ")
}

func TestTrailTruncationIsDetected(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web")
	tools := s.tools()
	id, hashes, sess := sealedTask(t, s, 5)
	s.close()

	// Delete the last two thoughts and leave the head alone.
	editStore(t, w, func(links, _ *bolt.Bucket) error {
		for _, p := range []int{4, 5} {
			if err := links.Delete(thoughtKey(1, p)); err != nil {
				return err
			}
		}
		return nil
	})
	s = w.serve("CAIRN_PROJECT=web")
	v := ok(t, s, "audit_verify_chain", map[string]any{"task_id": id})
	validateAgainst(t, w, tools["audit_verify_chain"], v)
	if got := entries(v); got != "thought root_mismatch@4; thought root_mismatch@5; thought head_mismatch@5" {
		t.Fatalf("truncation, head kept: %s", got)
	}
	if v["chain_valid"] != false || v["missing_records"] != float64(2) || v["total_records"] != float64(6) || v["integrity_score"] != float64(67) {
		t.Fatalf("truncation, head kept: %v", v)
	}
	head := v["broken_links"].([]any)[2].(map[string]any)
	if head["expected_length"] != float64(5) || head["actual_length"] != float64(3) || head["expected_hash"] != hashes[4] || head["actual_hash"] != hashes[2] {
		t.Fatalf("head entry %v", head)
	}
	root := v["broken_links"].([]any)[0].(map[string]any)
	if root["session_id"] != sess || root["expected_hash"] != hashes[3] || root["actual_hash"] != "" {
		t.Fatalf("root entry %v", root)
	}
	s.close()

	// Move the head back too: the chain and its head agree, the finalized
	// root still names both records.
	editStore(t, w, func(links, heads *bolt.Bucket) error {
		l := parseStoredLink(t, links.Get(thoughtKey(1, 3)))
		h := make([]byte, 40)
		binary.BigEndian.PutUint64(h, 3)
		copy(h[8:], l.hash[:])
		return heads.Put(thoughtHeadKey(1), h)
	})
	s = w.serve("CAIRN_PROJECT=web")
	v = ok(t, s, "audit_verify_chain", map[string]any{"session_id": sess})
	if got := entries(v); got != "thought root_mismatch@4; thought root_mismatch@5" || v["chain_valid"] != false || v["integrity_score"] != float64(67) {
		t.Fatalf("truncation, head moved back: %s %v", got, v)
	}
	l := ok(t, s, "thought_record_list", map[string]any{"task_id": id, "verify_chain": true})
	if l["chain_valid"] != false || fmt.Sprint(l["invalid_links"]) != "[4 5]" {
		t.Fatalf("thought_record_list: %v", l)
	}
	s.close()
}

func TestTrailConsistentRewriteIsDetected(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web")
	id, hashes, sess := sealedTask(t, s, 4)
	s.close()

	// Rewrite decision 2 and recompute every hash after it, head included.
	var forged []string
	editStore(t, w, func(links, heads *bolt.Bucket) error {
		prev := parseStoredLink(t, links.Get(thoughtKey(1, 1))).hash
		for p := 2; p <= 4; p++ {
			l := parseStoredLink(t, links.Get(thoughtKey(1, p)))
			if p == 2 {
				l.str[2] = "we chose the opposite"
			}
			l.str[3] = hex.EncodeToString(prev[:])
			l.rehash(t, id)
			if err := links.Put(thoughtKey(1, p), l.encode()); err != nil {
				return err
			}
			prev = l.hash
			forged = append(forged, hex.EncodeToString(l.hash[:]))
		}
		h := make([]byte, 40)
		binary.BigEndian.PutUint64(h, 4)
		copy(h[8:], prev[:])
		return heads.Put(thoughtHeadKey(1), h)
	})
	s = w.serve("CAIRN_PROJECT=web")
	v := ok(t, s, "audit_verify_chain", map[string]any{"session_id": sess, "full_trace": true})
	if got := entries(v); got != "thought root_mismatch@2; thought root_mismatch@3; thought root_mismatch@4" {
		t.Fatalf("consistent rewrite: %s", got)
	}
	if v["chain_valid"] != false || v["integrity_score"] != float64(40) { // 2 of 5 links are what was sealed
		t.Fatalf("consistent rewrite: %v", v)
	}
	for i, b := range v["broken_links"].([]any) {
		m := b.(map[string]any)
		if m["expected_hash"] != hashes[i+1] || m["actual_hash"] != forged[i] || m["session_id"] != sess {
			t.Fatalf("entry %d: %v, want sealed %s stored %s", i, m, hashes[i+1], forged[i])
		}
	}
	// The links themselves recompute: the trace shows why only the seal can tell.
	for _, e := range v["trace"].([]any) {
		m := e.(map[string]any)
		if m["stored_hash"] != m["recomputed_hash"] {
			t.Fatalf("trace %v", m)
		}
	}
	s.close()
	if code, _, errOut := runCairn(t, w, "", nil, "audit", "export", sess, "-o", filepath.Join(w.root, "p.json")); code == 0 || !strings.Contains(errOut, "root") {
		t.Fatalf("export of a rewritten trail: exit %d %s", code, errOut)
	}
}
