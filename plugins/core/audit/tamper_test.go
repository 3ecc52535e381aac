package audit

import (
	"encoding/binary"
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// Tampering an attacker with write access to the store file can do, applied
// with bbolt directly, and what audit_verify_chain reports for each.

// edit runs fn on the raw buckets, as a hand edit of the file would.
func edit(t *testing.T, st *store.Store, fn func(links, heads kv.Bucket) error) {
	t.Helper()
	if err := st.Update(func(tx kv.Tx) error {
		return fn(tx.Bucket([]byte(store.BucketChainLinks)), tx.Bucket([]byte(store.BucketChainLinks)))
	}); err != nil {
		t.Fatal(err)
	}
}

func num(id string) uint64 { n, _ := tasks.ParseTaskID(id); return n }

// deleteLinks deletes the thought links at the given positions.
func deleteLinks(t *testing.T, st *store.Store, task string, pos ...int) {
	edit(t, st, func(links, _ kv.Bucket) error {
		for _, p := range pos {
			if err := links.Delete(linkKey(num(task), chainThought, p)); err != nil {
				return err
			}
		}
		return nil
	})
}

// setHead points a chain's head at its stored link at pos, as an attacker
// covering a truncation would.
func setHead(t *testing.T, st *store.Store, task string, chain byte, pos int) {
	edit(t, st, func(links, heads kv.Bucket) error {
		v := links.Get(linkKey(num(task), chain, pos))
		if v == nil {
			return fmt.Errorf("no link at %d", pos)
		}
		h := make([]byte, 40)
		binary.BigEndian.PutUint64(h, uint64(pos))
		copy(h[8:], v[8:40])
		return heads.Put(headKey(num(task), chain), h)
	})
}

// rewriteFrom changes the record at position from with change and recomputes
// every hash and back-link after it, and the head: a chain rewritten
// consistently by someone who knows the hash rule.
func rewriteFrom(t *testing.T, st *store.Store, task string, chain byte, from int, change func(b *linkBody)) {
	t.Helper()
	err := st.Update(func(tx kv.Tx) error {
		n := num(task)
		var prev *string
		if from > 1 {
			l, _, err := getLink(tx, n, chain, from-1)
			if err != nil {
				return err
			}
			h := l.hashHex()
			prev = &h
		}
		var last link
		for pos := from; ; pos++ {
			l, ok, err := getLink(tx, n, chain, pos)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			if pos == from {
				change(&l.body)
			}
			l.body.PreviousHash = prev
			f := l.fields()
			if l.hash, err = f.Sum(); err != nil {
				return err
			}
			h := l.hashHex()
			prev = &h
			if err := tx.Bucket([]byte(store.BucketChainLinks)).Put(linkKey(n, chain, pos), encodeLink(&l)); err != nil {
				return err
			}
			last = l
		}
		head := make([]byte, 40)
		binary.BigEndian.PutUint64(head, uint64(last.pos))
		copy(head[8:], last.hash[:])
		return tx.Bucket([]byte(store.BucketChainLinks)).Put(headKey(n, chain), head)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func brokenSummary(bl []trail.BrokenLink) string {
	var s []string
	for _, b := range bl {
		s = append(s, fmt.Sprintf("%s %s@%d", b.Chain, b.Reason, b.Position))
	}
	return strings.Join(s, "; ")
}

// fiveThoughts makes a task with five thoughts (6 links with its
// task_created event) and, when seal is set, a finalized session over it.
func fiveThoughts(t *testing.T, seal bool) (*env, string, []RecordOutput, string) {
	e := newEnv(t)
	id := e.task("")
	var recs []RecordOutput
	for i := 1; i <= 5; i++ {
		recs = append(recs, e.think(id, fmt.Sprintf("thought %d", i)))
	}
	sess := ""
	if seal {
		s, _ := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "auditor"})
		if _, err := e.audit.Finalize(FinalizeInput{SessionID: s.SessionID}); err != nil {
			t.Fatal(err)
		}
		sess = s.SessionID
	}
	return e, id, recs, sess
}

func TestStoreTamperingIsDetected(t *testing.T) { pgtest.EachStore(t, testStoreTamperingIsDetected) }

func testStoreTamperingIsDetected(t *testing.T) {
	for _, c := range []struct {
		name    string
		seal    bool
		tamper  func(t *testing.T, e *env, id string)
		want    string // broken links, in report order
		score   int
		missing int
		list    string // thought_record_list invalid_links
	}{
		{
			name:   "truncated, head kept",
			tamper: func(t *testing.T, e *env, id string) { deleteLinks(t, e.st, id, 4, 5) },
			want:   "thought head_mismatch@5", score: 67, missing: 2, list: "[5]", // 4 of 6 links
		},
		{
			name: "truncated, head moved back, sealed",
			seal: true,
			tamper: func(t *testing.T, e *env, id string) {
				deleteLinks(t, e.st, id, 4, 5)
				setHead(t, e.st, id, chainThought, 3)
			},
			want: "thought root_mismatch@4; thought root_mismatch@5", score: 67, missing: 2, list: "[4 5]",
		},
		{
			name: "truncated, head moved back, never sealed",
			tamper: func(t *testing.T, e *env, id string) {
				deleteLinks(t, e.st, id, 4, 5)
				setHead(t, e.st, id, chainThought, 3)
			},
			want: "", score: 100, list: "[]", // only an exported checkpoint can tell (docs/decision-trail.md)
		},
		{
			name:   "deleted in the middle",
			tamper: func(t *testing.T, e *env, id string) { deleteLinks(t, e.st, id, 3) },
			want:   "thought missing_record@3; thought previous_hash_mismatch@4", score: 67, missing: 1, list: "[3 4]",
		},
		{
			name:   "deleted in the middle, sealed",
			seal:   true,
			tamper: func(t *testing.T, e *env, id string) { deleteLinks(t, e.st, id, 2) },
			want:   "thought root_mismatch@2; thought missing_record@2; thought previous_hash_mismatch@3", score: 67, missing: 1, list: "[2 3]",
		},
		{
			name: "swapped",
			tamper: func(t *testing.T, e *env, id string) {
				edit(t, e.st, func(links, _ kv.Bucket) error {
					k2, k3 := linkKey(num(id), chainThought, 2), linkKey(num(id), chainThought, 3)
					v2, v3 := append([]byte(nil), links.Get(k2)...), append([]byte(nil), links.Get(k3)...)
					if err := links.Put(k2, v3); err != nil {
						return err
					}
					return links.Put(k3, v2)
				})
			},
			want: "thought previous_hash_mismatch@2; thought previous_hash_mismatch@3; thought previous_hash_mismatch@4", score: 50, list: "[2 3 4]",
		},
		{
			name: "rewritten consistently, head kept",
			tamper: func(t *testing.T, e *env, id string) {
				var head []byte
				edit(t, e.st, func(_, heads kv.Bucket) error {
					head = append([]byte(nil), heads.Get(headKey(num(id), chainThought))...)
					return nil
				})
				rewriteFrom(t, e.st, id, chainThought, 2, func(b *linkBody) { b.Content = "we never chose this" })
				edit(t, e.st, func(_, heads kv.Bucket) error { return heads.Put(headKey(num(id), chainThought), head) })
			},
			want: "thought head_mismatch@5", score: 83, list: "[5]",
		},
		{
			name: "rewritten consistently with the head, sealed",
			seal: true,
			tamper: func(t *testing.T, e *env, id string) {
				rewriteFrom(t, e.st, id, chainThought, 2, func(b *linkBody) { b.Content = "we never chose this" })
			},
			want:  "thought root_mismatch@2; thought root_mismatch@3; thought root_mismatch@4; thought root_mismatch@5",
			score: 33, list: "[2 3 4 5]",
		},
		{
			name: "rewritten consistently with the head, never sealed",
			tamper: func(t *testing.T, e *env, id string) {
				rewriteFrom(t, e.st, id, chainThought, 2, func(b *linkBody) { b.Content = "we never chose this" })
			},
			want: "", score: 100, list: "[]", // only an exported checkpoint can tell
		},
		{
			name: "head deleted",
			tamper: func(t *testing.T, e *env, id string) {
				edit(t, e.st, func(_, h kv.Bucket) error { return h.Delete(headKey(num(id), chainThought)) })
			},
			want: "thought head_mismatch@0", score: 17, list: "[]",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, id, _, _ := fiveThoughts(t, c.seal)
			c.tamper(t, e, id)
			r, err := e.audit.Verify(VerifyInput{TaskID: &id, FullTrace: boolp(true)})
			if err != nil {
				t.Fatal(err)
			}
			if got := brokenSummary(r.BrokenLinks); got != c.want {
				t.Fatalf("broken links %q, want %q", got, c.want)
			}
			if r.ChainValid != (c.want == "") || r.IntegrityScore != c.score || r.MissingRecords != c.missing || r.TotalRecords != r.MissingRecords+len(r.Trace) {
				t.Fatalf("valid %v score %d missing %d total %d trace %d; want score %d missing %d", r.ChainValid, r.IntegrityScore, r.MissingRecords, r.TotalRecords, len(r.Trace), c.score, c.missing)
			}
			l, err := e.audit.List(ListInput{TaskID: &id, VerifyChain: boolp(true)})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(l.InvalidLinks) != c.list || *l.ChainValid != (c.want == "") {
				t.Fatalf("thought_record_list: valid %v invalid_links %v, want %s", *l.ChainValid, l.InvalidLinks, c.list)
			}
		})
	}
}

// The entries name what disagrees: expected against stored.
func TestTamperReportsNameTheDisagreement(t *testing.T) {
	pgtest.EachStore(t, testTamperReportsNameTheDisagreement)
}

func testTamperReportsNameTheDisagreement(t *testing.T) {
	e, id, recs, sess := fiveThoughts(t, true)
	deleteLinks(t, e.st, id, 4, 5)
	r, _ := e.audit.Verify(VerifyInput{TaskID: &id})
	if brokenSummary(r.BrokenLinks) != "thought root_mismatch@4; thought root_mismatch@5; thought head_mismatch@5" {
		t.Fatalf("entries %s", brokenSummary(r.BrokenLinks))
	}
	h := r.BrokenLinks[2]
	if h.Reason != trail.ReasonHead || *h.ExpectedLength != 5 || *h.ActualLength != 3 || h.ExpectedHash != recs[4].Hash || h.ActualHash != recs[2].Hash || h.TaskID != id {
		t.Fatalf("head entry %+v", h)
	}
	for i, b := range r.BrokenLinks[:2] {
		if b.Reason != trail.ReasonRoot || b.Position != 4+i || b.SessionID != sess || b.ExpectedHash != recs[3+i].Hash || b.ActualHash != "" {
			t.Fatalf("root entry %+v", b)
		}
	}

	e, id, recs, sess = fiveThoughts(t, true)
	rewriteFrom(t, e.st, id, chainThought, 3, func(b *linkBody) { b.Content = "rewritten" })
	r, _ = e.audit.Verify(VerifyInput{SessionID: &sess})
	b := r.BrokenLinks[0]
	if b.Reason != trail.ReasonRoot || b.Position != 3 || b.ExpectedHash != recs[2].Hash || b.ActualHash == recs[2].Hash || b.RecordID != recs[2].ThoughtID || b.SessionID != sess {
		t.Fatalf("root entry %+v", b)
	}
	// Export refuses to sign what no longer matches the frozen root.
	meta, records, root, err := e.audit.Export(sess)
	if err != nil {
		t.Fatal(err)
	}
	signer, _, _ := bundle.LoadOrCreateKey(bundle.KeyPath(t.TempDir(), ""), "k")
	if _, err := bundle.BuildBundle(meta, records, root, signer); err == nil {
		t.Fatal("export signed a rewritten trail")
	}
}

// A later session over the same task sees the seal of an earlier one, and
// an attacker who also rewrites the sealed leaves is caught by the root.
func TestSealsOfEverySessionApply(t *testing.T) { pgtest.EachStore(t, testSealsOfEverySessionApply) }

func testSealsOfEverySessionApply(t *testing.T) {
	e, id, _, sealed := fiveThoughts(t, true)
	open, _ := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "later"})
	rewriteFrom(t, e.st, id, chainThought, 5, func(b *linkBody) { b.Content = "rewritten" })
	r, _ := e.audit.Verify(VerifyInput{SessionID: &open.SessionID})
	if brokenSummary(r.BrokenLinks) != "thought root_mismatch@5" || r.BrokenLinks[0].SessionID != sealed {
		t.Fatalf("open session's verify: %s", brokenSummary(r.BrokenLinks))
	}

	// Rewrite the sealed leaf too (but not the root): the session's root no
	// longer recomputes, reported once for the session.
	err := e.st.Update(func(tx kv.Tx) error {
		n, _ := parseSessionID(sealed)
		b := tx.Bucket([]byte(store.BucketAuditFrozen))
		packed := append([]byte(nil), b.Get(store.U64(n))...)
		l, _, err := getLink(tx, num(id), chainThought, 5)
		if err != nil {
			return err
		}
		// Leaf order: the task_created event, then thoughts 1..5.
		copy(packed[5*sealedRefSize+refSize:], l.hash[:])
		return b.Put(store.U64(n), packed)
	})
	if err != nil {
		t.Fatal(err)
	}
	r, _ = e.audit.Verify(VerifyInput{TaskID: &id})
	if len(r.BrokenLinks) != 1 || r.ChainValid || r.IntegrityScore != 100 {
		t.Fatalf("after forging the leaf: %+v", r)
	}
	if b := r.BrokenLinks[0]; b.Reason != trail.ReasonRoot || b.Position != 0 || b.SessionID != sealed || b.ActualHash == b.ExpectedHash || !strings.Contains(b.Detail, "frozen record set") {
		t.Fatalf("session entry %+v", b)
	}
}

// A store written before leaf hashes were kept (testdata/store-v2.db, made
// by the code of commit 99b6f7e: tasks T-1 and its child T-2, session A-1
// deep and finalized over 8 records, a later thought, open session A-2)
// still verifies, exports, and reports a consistent rewrite through its root.
func TestStoreFromBeforeLeafSeals(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T) *env {
		raw, err := os.ReadFile(filepath.Join("testdata", "store-v2.db"))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "core.db")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return &env{t: t, st: st, audit: New(st, Config{})}
	}
	e := open(t)
	for _, in := range []VerifyInput{{SessionID: str("A-1")}, {SessionID: str("A-2")}, {TaskID: str("T-1")}} {
		r, err := e.audit.Verify(in)
		if err != nil || !r.ChainValid || r.IntegrityScore != 100 {
			t.Fatalf("verify %+v: %+v %v", in, r, err)
		}
	}
	r, _ := e.audit.Verify(VerifyInput{SessionID: str("A-1")})
	if r.TotalRecords != 9 { // T-1: 1 event + 5 thoughts; T-2: 2 events + 1 thought
		t.Fatalf("total %d", r.TotalRecords)
	}
	meta, records, root, err := e.audit.Export("A-1")
	if err != nil || len(records) != 8 {
		t.Fatalf("export: %d records %v", len(records), err)
	}
	signer, _, _ := bundle.LoadOrCreateKey(bundle.KeyPath(t.TempDir(), ""), "k")
	if _, err := bundle.BuildBundle(meta, records, root, signer); err != nil {
		t.Fatal(err)
	}

	// Rewrite T-1's thought chain from position 2, head included.
	rewriteFrom(t, e.st, "T-1", chainThought, 2, func(b *linkBody) { b.Content = "rewritten" })
	r, _ = e.audit.Verify(VerifyInput{TaskID: str("T-1")})
	if r.ChainValid || len(r.BrokenLinks) != 1 {
		t.Fatalf("after a consistent rewrite: %s", brokenSummary(r.BrokenLinks))
	}
	if b := r.BrokenLinks[0]; b.Reason != trail.ReasonRoot || b.SessionID != "A-1" || b.Position != 0 || b.ExpectedHash != root || b.ActualHash == root {
		t.Fatalf("entry %+v", b)
	}

	// Deleting a sealed record is named by position even without leaf hashes.
	e = open(t)
	deleteLinks(t, e.st, "T-2", 1)
	edit(t, e.st, func(_, h kv.Bucket) error { return h.Delete(headKey(2, chainThought)) })
	r, _ = e.audit.Verify(VerifyInput{TaskID: str("T-2")})
	if brokenSummary(r.BrokenLinks) != "thought root_mismatch@1" || r.BrokenLinks[0].SessionID != "A-1" || r.MissingRecords != 1 || r.IntegrityScore != 67 {
		t.Fatalf("deleted sealed record: %s %+v", brokenSummary(r.BrokenLinks), r)
	}
}

// A damaged session record cannot vouch, and says so instead of blocking
// every verification.
func TestDamagedSessionRecordIsReported(t *testing.T) {
	pgtest.EachStore(t, testDamagedSessionRecordIsReported)
}

func testDamagedSessionRecordIsReported(t *testing.T) {
	e, id, _, _ := fiveThoughts(t, true)
	if err := e.st.Update(func(tx kv.Tx) error {
		return tx.Bucket([]byte(store.BucketAuditSessions)).Put(store.U64(1), []byte("{not json"))
	}); err != nil {
		t.Fatal(err)
	}
	r, err := e.audit.Verify(VerifyInput{TaskID: &id})
	if err != nil || r.ChainValid || len(r.BrokenLinks) != 1 || r.IntegrityScore != 100 || !strings.Contains(r.BrokenLinks[0].Detail, "does not decode") {
		t.Fatalf("%+v %v", r, err)
	}
}
