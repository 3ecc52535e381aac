package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/cairn-mcp/cairn/internal/trail"
)

// sessionRecords builds the records of a deep session over two tasks, each
// with a thought chain and an event chain, interleaved in recorded order.
func sessionRecords(t testing.TB, perChain int) []Record {
	t.Helper()
	type key struct{ task, chain string }
	prev := map[key]string{}
	pos := map[key]int{}
	var out []Record
	n := 0
	for i := 0; i < perChain; i++ {
		for _, k := range []key{{"T-1", trail.ChainEvent}, {"T-1", trail.ChainThought}, {"T-2", trail.ChainEvent}, {"T-2", trail.ChainThought}} {
			n++
			typ, content := "decision", fmt.Sprintf("step %d of %s <&> \u2028 😀", i, k.task)
			if k.chain == trail.ChainEvent {
				typ = trail.TypeTaskUpdated
				if i == 0 {
					typ = trail.TypeTaskCreated
				}
				c, err := trail.Stringify(trail.Object{{Key: "status", Value: "in_progress"}, {Key: "progress", Value: i * 10}})
				if err != nil {
					t.Fatal(err)
				}
				content = c
			}
			f := trail.Fields{TaskID: k.task, Type: typ, Content: content, PreviousHash: prev[k],
				RecordedAt: fmt.Sprintf("2026-11-22T08:40:12.%03dZ", n), RecordedBy: "claude-code"}
			h, err := trail.HashRecord(f)
			if err != nil {
				t.Fatal(err)
			}
			pos[k]++
			id := fmt.Sprintf("Θ-%d", n)
			if k.chain == trail.ChainEvent {
				id = fmt.Sprintf("E-%d", n)
			}
			out = append(out, NewRecord(id, k.chain, pos[k], f, h))
			prev[k] = h
		}
	}
	return out
}

func testSession() Session {
	return Session{SessionID: "A-7", TaskID: "T-1", TaskIDs: []string{"T-1", "T-2"}, AuditorID: "auditor",
		Scope: "deep", StartedAt: "2026-11-22T08:40:00.000Z", FinalizedAt: "2026-11-22T09:00:00.000Z"}
}

func testKey(t testing.TB) (note.Signer, string) {
	t.Helper()
	signer, vkey, err := LoadOrCreateKey(KeyPath(t.TempDir(), ""), "cairn")
	if err != nil {
		t.Fatal(err)
	}
	return signer, vkey
}

func build(t testing.TB, signer note.Signer) *Bundle {
	t.Helper()
	b, err := BuildBundle(testSession(), sessionRecords(t, 3), "", signer)
	if err != nil {
		t.Fatal(err)
	}
	// Round-trip through the file format so tests see what a verifier sees.
	data, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err = Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildAndVerify(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	b := build(t, signer)
	if err := VerifyBundle(b, vkey); err != nil {
		t.Fatal(err)
	}
	if b.TreeSize != 12 || b.TreeDepth != 4 || len(b.Proofs) != 12 || b.Records[0].PreviousHash != nil {
		t.Fatalf("bundle shape: size %d depth %d", b.TreeSize, b.TreeDepth)
	}
	lines := strings.Split(b.Checkpoint, "\n")
	if lines[0] != "cairn/audit/A-7" || lines[1] != "12" || !strings.HasPrefix(lines[3], "cairn-session-sha256 ") || lines[4] != "" || !strings.HasPrefix(lines[5], "— cairn ") {
		t.Fatalf("checkpoint:\n%s", b.Checkpoint)
	}
	// The frozen root must match; another root is refused.
	if _, err := BuildBundle(testSession(), sessionRecords(t, 3), b.Root, signer); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildBundle(testSession(), sessionRecords(t, 3), strings.Repeat("0", 64), signer); err == nil {
		t.Fatal("root differing from the frozen one accepted")
	}
	// An empty session still yields a verifiable bundle (root = SHA-256 of "").
	e, err := BuildBundle(testSession(), nil, "", signer)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyBundle(e, vkey); err != nil || e.Root != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty bundle: %v %s", err, e.Root)
	}
}

func TestBuildRefusesBrokenTrail(t *testing.T) {
	t.Parallel()
	signer, _ := testKey(t)
	recs := sessionRecords(t, 2)
	recs[3].Content = "edited"
	_, err := BuildBundle(testSession(), recs, "", signer)
	if err == nil || !strings.Contains(err.Error(), "record 3") {
		t.Fatalf("broken trail signed: %v", err)
	}
}

func TestTamperDetection(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	other, otherKey := testKey(t)
	flip := func(h string) string {
		c := "0"
		if h[10] == '0' {
			c = "1"
		}
		return h[:10] + c + h[11:]
	}
	cases := []struct {
		name   string
		mutate func(b *Bundle) string // returns the verifier key to use
		part   string
		index  int
	}{
		{"record content", func(b *Bundle) string { b.Records[5].Content = "forged"; return vkey }, PartRecord, 5},
		{"record type", func(b *Bundle) string { b.Records[2].Type = "risk"; return vkey }, PartRecord, 2},
		{"record hash and leaf rehashed", func(b *Bundle) string {
			b.Records[4].Content = "forged"
			f := b.Records[4].Fields()
			b.Records[4].Hash, _ = trail.HashRecord(f)
			b.Leaves[4] = b.Records[4].Hash
			return vkey
		}, PartLink, 8}, // next link of the same chain (T-1 event, index 8) breaks
		{"previous hash", func(b *Bundle) string {
			p := flip(*b.Records[6].PreviousHash)
			b.Records[6].PreviousHash = &p
			return vkey
		}, PartLink, 6},
		{"position", func(b *Bundle) string { b.Records[9].Position = 7; return vkey }, PartLink, 9},
		{"dropped record", func(b *Bundle) string {
			b.Records = append(b.Records[:1], b.Records[2:]...)
			return vkey
		}, PartFormat, -1},
		{"record outside scope", func(b *Bundle) string { b.Session.TaskIDs = []string{"T-1"}; return vkey }, PartSession, 2},
		{"leaf", func(b *Bundle) string { b.Leaves[7] = flip(b.Leaves[7]); return vkey }, PartLeaf, 7},
		{"proof", func(b *Bundle) string { b.Proofs[3].Hashes[1] = flip(b.Proofs[3].Hashes[1]); return vkey }, PartProof, 3},
		{"proof index", func(b *Bundle) string { b.Proofs[3].LeafIndex = 4; return vkey }, PartProof, 3},
		{"proof truncated", func(b *Bundle) string { b.Proofs[0].Hashes = b.Proofs[0].Hashes[1:]; return vkey }, PartProof, 0},
		{"root", func(b *Bundle) string { b.Root = flip(b.Root); return vkey }, PartRoot, -1},
		{"tree size", func(b *Bundle) string { b.TreeSize = 13; return vkey }, PartFormat, -1},
		{"signature", func(b *Bundle) string {
			i := strings.LastIndex(b.Checkpoint, " ") + 5
			c := byte('A')
			if b.Checkpoint[i] == 'A' {
				c = 'B'
			}
			b.Checkpoint = b.Checkpoint[:i] + string(c) + b.Checkpoint[i+1:]
			return vkey
		}, PartSignature, -1},
		{"checkpoint body", func(b *Bundle) string {
			b.Checkpoint = strings.Replace(b.Checkpoint, "\n12\n", "\n13\n", 1)
			return vkey
		}, PartSignature, -1},
		{"wrong key", func(b *Bundle) string { return otherKey }, PartSignature, -1},
		{"malformed key", func(b *Bundle) string { return "not-a-key" }, PartKey, -1},
		{"re-signed by another key", func(b *Bundle) string {
			n, _ := note.Open([]byte(b.Checkpoint), note.VerifierList(mustVerifier(t, vkey)))
			msg, _ := note.Sign(&note.Note{Text: n.Text}, other)
			b.Checkpoint = string(msg)
			return vkey
		}, PartSignature, -1},
		{"session scope", func(b *Bundle) string { b.Session.Scope = "shallow"; return vkey }, PartSession, -1},
		{"session finalized_at", func(b *Bundle) string { b.Session.FinalizedAt = "2027-01-01T00:00:00.000Z"; return vkey }, PartSession, -1},
		{"checkpoint of another session", func(b *Bundle) string { b.Session.SessionID = "A-8"; return vkey }, PartCheckpoint, -1},
		{"format", func(b *Bundle) string { b.Format = "v0"; return vkey }, PartFormat, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := build(t, signer)
			key := c.mutate(b)
			err := VerifyBundle(b, key)
			ve, ok := err.(*VerifyError)
			if !ok {
				t.Fatalf("got %v, want a *VerifyError", err)
			}
			found := false
			for _, p := range ve.Problems {
				if p.Part == c.part && p.Index == c.index {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s problem at index %d in: %v", c.part, c.index, err)
			}
			if c.index >= 0 && c.index < len(b.Records) && !strings.Contains(err.Error(), b.Records[c.index].ID) {
				t.Fatalf("error does not name record %s: %v", b.Records[c.index].ID, err)
			}
			t.Log(err)
		})
	}
}

func mustVerifier(t *testing.T, vkey string) note.Verifier {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestProblemsAreBounded(t *testing.T) {
	t.Parallel()
	signer, vkey := testKey(t)
	b, err := BuildBundle(testSession(), sessionRecords(t, 30), "", signer)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Records {
		b.Records[i].Content += "!"
	}
	ve := VerifyBundle(b, vkey).(*VerifyError)
	if len(ve.Problems) != maxProblems || ve.Omitted != len(b.Records)-maxProblems {
		t.Fatalf("%d problems, %d omitted", len(ve.Problems), ve.Omitted)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s1, v1, err := LoadOrCreateKey(KeyPath(dir, ""), "cairn")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %o", fi.Mode().Perm())
	}
	s2, v2, err := LoadOrCreateKey(KeyPath(dir, ""), "cairn")
	if err != nil {
		t.Fatal(err)
	}
	if v1 != v2 || s1.KeyHash() != s2.KeyHash() {
		t.Fatal("second load returned another key")
	}
	// The verifier key verifies what the signer signs.
	msg, err := note.Sign(&note.Note{Text: "hello\n"}, s2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(mustVerifier(t, v1))); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v1, "cairn+") || strings.Contains(v1, "PRIVATE") {
		t.Fatalf("verifier key %q", v1)
	}
	if _, _, err := LoadOrCreateKey(KeyPath(dir, ""), "other"); err == nil {
		t.Fatal("key of another name accepted")
	}
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateKey(KeyPath(dir, ""), "cairn"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable key accepted: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
	if _, _, err := LoadOrCreateKey(KeyPath(t.TempDir(), ""), "bad name"); err == nil {
		t.Fatal("invalid key name accepted")
	}
}

func FuzzVerifyBundle(f *testing.F) {
	signer, vkey := testKey(f)
	b, err := BuildBundle(testSession(), sessionRecords(f, 2), "", signer)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := b.Marshal()
	f.Add(good)
	f.Add([]byte(`{"format":"cairn-proof-bundle/v1","tree_size":1,"records":[{}],"leaves":["00"],"proofs":[{"hashes":["zz"]}]}`))
	f.Add([]byte(`{"format":"cairn-proof-bundle/v1","tree_size":18446744073709551615,"root":"` + strings.Repeat("a", 64) + `"}`))
	f.Add([]byte(`{"format":"cairn-proof-bundle/v1","checkpoint":"x\n\n— cairn AAAA\n"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse(data)
		if err != nil {
			return
		}
		_ = VerifyBundle(b, vkey)
		_, _ = json.Marshal(b)
	})
}

func BenchmarkBuildAndVerify(b *testing.B) {
	signer, vkey := testKey(b)
	recs := sessionRecords(b, 2500) // 10,000 records
	b.ResetTimer()
	for b.Loop() {
		bd, err := BuildBundle(testSession(), recs, "", signer)
		if err != nil {
			b.Fatal(err)
		}
		if err := VerifyBundle(bd, vkey); err != nil {
			b.Fatal(err)
		}
	}
}

// A key file named outside the data dir (CAIRN_AUDIT_KEY_FILE) is created
// there, in a directory made for it, and two data dirs pointed at it sign
// with one key.
func TestKeyFileOutsideTheDataDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	shared := filepath.Join(base, "secrets", "cairn-audit.key")
	if got := KeyPath(filepath.Join(base, "a"), shared); got != shared {
		t.Fatalf("KeyPath with a file = %q", got)
	}
	if got := KeyPath(filepath.Join(base, "a"), ""); got != filepath.Join(base, "a", KeyFile) {
		t.Fatalf("KeyPath without a file = %q", got)
	}
	_, v1, err := LoadOrCreateKey(KeyPath(filepath.Join(base, "a"), shared), "cairn")
	if err != nil {
		t.Fatal(err)
	}
	_, v2, err := LoadOrCreateKey(KeyPath(filepath.Join(base, "b"), shared), "cairn")
	if err != nil {
		t.Fatal(err)
	}
	if v1 != v2 {
		t.Fatalf("two data dirs on one key file got %q and %q", v1, v2)
	}
	for _, d := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(base, d)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("data dir %s was created or written: %v", d, err)
		}
	}
}
