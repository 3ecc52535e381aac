package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"

	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/internal/trail/bundle"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// env is a core store with the task service wired to the decision trail the
// way the core plugin wires it.
type env struct {
	t      testing.TB
	st     *store.Store
	tasks  *tasks.Service
	audit  *Service
	mu     sync.Mutex
	events []string
	clock  time.Time
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func newEnv(t testing.TB) *env {
	t.Helper()
	// Under pgtest.EachStore's postgres run every fixture gets a database
	// of its own, as every bbolt fixture gets its own directory.
	setting := os.Getenv(store.SettingEnv)
	if setting != "" {
		setting = pgtest.DSN(t)
	}
	st, err := store.OpenFor(t.TempDir(), setting)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{t: t, st: st, clock: time.Date(2026, 11, 22, 8, 40, 12, 123e6, time.UTC)}
	clock := func() time.Time {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.clock = e.clock.Add(time.Millisecond)
		return e.clock
	}
	pub := func(typ string, _ any) {
		e.mu.Lock()
		e.events = append(e.events, typ)
		e.mu.Unlock()
	}
	e.audit = New(st, Config{Clock: clock, Publish: pub})
	e.tasks = tasks.New(st, tasks.Config{Clock: clock, Publish: pub, OnChange: e.audit.AppendTaskChange, ThoughtTrail: e.audit.ThoughtTrail})
	if _, err := e.tasks.AddProject("demo"); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) task(parent string) string {
	e.t.Helper()
	in := tasks.CreateInput{Title: "task", Project: "demo"}
	if parent != "" {
		in.ParentID = &parent
	}
	out, err := e.tasks.Create("alice", in)
	if err != nil {
		e.t.Fatal(err)
	}
	return out.TaskID
}

func (e *env) think(task, content string) RecordOutput {
	e.t.Helper()
	out, err := e.audit.Record("bob", RecordInput{TaskID: task, Type: "decision", Content: content})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func str(s string) *string { return &s }
func intp(n int) *int      { return &n }
func boolp(b bool) *bool   { return &b }

func wantErr(t *testing.T, err error, status int, code, field, constraint string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("want %d %s on %s, got %v", status, code, field, err)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("want %d %s, got %d %s: %s", status, code, e.Status, e.Code, e.Message)
	}
	if field != "" && e.Details["field"] != field {
		t.Fatalf("want field %q, got %v (%s)", field, e.Details["field"], e.Message)
	}
	if constraint != "" && e.Details["constraint"] != constraint {
		t.Fatalf("want constraint %q, got %v (%s)", constraint, e.Details["constraint"], e.Message)
	}
}

func TestRecordLinksAndHashes(t *testing.T) { pgtest.EachStore(t, testRecordLinksAndHashes) }

func testRecordLinksAndHashes(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	first := e.think(id, "use bbolt")
	if first.ThoughtID != "Θ-1" || first.ChainPosition != 1 || first.PreviousHash != nil {
		t.Fatalf("first record %+v", first)
	}
	want, _ := trail.HashRecord(trail.Fields{TaskID: id, Type: "decision", Content: "use bbolt", RecordedAt: first.RecordedAt, RecordedBy: "bob"})
	if first.Hash != want {
		t.Fatalf("hash %s, want %s (the specification's rule)", first.Hash, want)
	}
	second := e.think(id, "and fsync every commit")
	if second.ThoughtID != "Θ-2" || second.ChainPosition != 2 || second.PreviousHash == nil || *second.PreviousHash != first.Hash {
		t.Fatalf("second record %+v does not link to %s", second, first.Hash)
	}
	got, err := e.tasks.Get(tasks.GetInput{TaskID: id, IncludeThoughtTrail: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.ThoughtTrail, ",") != "Θ-1,Θ-2" {
		t.Fatalf("thought trail %v", got.ThoughtTrail)
	}
	if n := strings.Count(strings.Join(e.events, " "), EventThoughtRecorded); n != 2 {
		t.Fatalf("%d thought.recorded events in %v", n, e.events)
	}
	// An unknown actor is recorded as "unknown" (D4's last fallback).
	anon, err := e.audit.Record("", RecordInput{TaskID: id, Type: "risk", Content: "x"})
	if err != nil || anon.RecordedBy != "unknown" {
		t.Fatalf("anonymous record %+v %v", anon, err)
	}
}

func TestRecordValidation(t *testing.T) { pgtest.EachStore(t, testRecordValidation) }

func testRecordValidation(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	long := func(n int) string { return strings.Repeat("é", n) }
	items := func(n int, s string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	ok := RecordInput{TaskID: id, Type: "decision", Content: "c"}
	cases := []struct {
		name              string
		mod               func(in *RecordInput)
		status            int
		code, field, rule string
	}{
		{"content 1", func(in *RecordInput) { in.Content = "x" }, 0, "", "", ""},
		{"content 5000", func(in *RecordInput) { in.Content = long(5000) }, 0, "", "", ""},
		{"content 0", func(in *RecordInput) { in.Content = "" }, 400, errs.InvalidInput, "content", "minLength"},
		{"content 5001", func(in *RecordInput) { in.Content = long(5001) }, 400, errs.InvalidInput, "content", "maxLength"},
		{"content not utf8", func(in *RecordInput) { in.Content = "a\xffb" }, 400, errs.InvalidInput, "content", "utf8"},
		{"task_id missing", func(in *RecordInput) { in.TaskID = "" }, 400, errs.InvalidInput, "task_id", "required"},
		{"task_id malformed", func(in *RecordInput) { in.TaskID = "T-01" }, 400, errs.InvalidInput, "task_id", "pattern"},
		{"task unknown", func(in *RecordInput) { in.TaskID = "T-999" }, 404, errs.TaskNotFound, "task_id", "exists"},
		{"type unknown", func(in *RecordInput) { in.Type = "musing" }, 400, errs.InvalidInput, "type", "enum"},
		{"type each", func(in *RecordInput) { in.Type = "blockers" }, 0, "", "", ""},
		{"branch 255", func(in *RecordInput) { in.Branch = str(long(255)) }, 0, "", "", ""},
		{"branch 256", func(in *RecordInput) { in.Branch = str(long(256)) }, 400, errs.InvalidInput, "branch", "maxLength"},
		{"commit 128", func(in *RecordInput) { in.CommitSHA = str(strings.Repeat("a", 128)) }, 0, "", "", ""},
		{"commit 129", func(in *RecordInput) { in.CommitSHA = str(strings.Repeat("a", 129)) }, 400, errs.InvalidInput, "commit_sha", "maxLength"},
		{"tests_run 100", func(in *RecordInput) { in.TestsRun = items(100, "go test ./...") }, 0, "", "", ""},
		{"tests_run 101", func(in *RecordInput) { in.TestsRun = items(101, "t") }, 400, errs.InvalidInput, "tests_run", "maxItems"},
		{"tests_run empty item", func(in *RecordInput) { in.TestsRun = []string{"a", ""} }, 400, errs.InvalidInput, "tests_run[1]", "minLength"},
		{"blockers item 1000", func(in *RecordInput) { in.Blockers = []string{long(1000)} }, 0, "", "", ""},
		{"blockers item 1001", func(in *RecordInput) { in.Blockers = []string{long(1001)} }, 400, errs.InvalidInput, "blockers[0]", "maxLength"},
		{"metadata object", func(in *RecordInput) { in.Metadata = json.RawMessage(`{"b":1,"a":"<&>"}`) }, 0, "", "", ""},
		{"metadata array", func(in *RecordInput) { in.Metadata = json.RawMessage(`[1]`) }, 400, errs.InvalidInput, "metadata", "type"},
		{"metadata too big", func(in *RecordInput) {
			in.Metadata = json.RawMessage(`{"x":"` + strings.Repeat("a", MaxMetadataBytes) + `"}`)
		}, 400, errs.InvalidInput, "metadata", "maxLength"},
		{"metadata not utf8", func(in *RecordInput) { in.Metadata = json.RawMessage("{\"x\":\"\xff\"}") }, 400, errs.InvalidInput, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := ok
			c.mod(&in)
			_, err := e.audit.Record("bob", in)
			if c.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantErr(t, err, c.status, c.code, c.field, c.rule)
		})
	}
	// Refused records leave no trace: ids and positions stay dense.
	out := e.think(id, "after the refusals")
	list, _ := e.audit.List(ListInput{TaskID: &id, Limit: intp(500)})
	if out.ChainPosition != list.TotalCount {
		t.Fatalf("position %d after %d accepted records", out.ChainPosition, list.TotalCount)
	}
}

func TestTaskChangesFormTheEventChain(t *testing.T) {
	pgtest.EachStore(t, testTaskChangesFormTheEventChain)
}

func testTaskChangesFormTheEventChain(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	if _, err := e.tasks.Update("carol", tasks.UpdateInput{TaskID: id, Status: str("todo")}); err != nil {
		t.Fatal(err)
	}
	var links []link
	_ = e.st.View(func(tx kv.Tx) error {
		n, _ := tasks.ParseTaskID(id)
		return eachLink(tx, n, chainEvent, true, func(l *link) error { links = append(links, *l); return nil })
	})
	if len(links) != 2 || links[0].body.Type != trail.TypeTaskCreated || links[1].body.Type != trail.TypeTaskUpdated {
		t.Fatalf("event chain %+v", links)
	}
	if links[1].body.RecordedBy != "carol" || *links[1].body.PreviousHash != links[0].hashHex() {
		t.Fatalf("update link %+v", links[1].body)
	}
	var change map[string]any
	if err := json.Unmarshal([]byte(links[1].body.Content), &change); err != nil || change["status"] != "todo" || change["previous_status"] != "backlog" {
		t.Fatalf("update content %s (%v)", links[1].body.Content, err)
	}
	r, err := e.audit.Verify(VerifyInput{TaskID: &id})
	if err != nil || !r.ChainValid || r.TotalRecords != 2 || r.IntegrityScore != 100 {
		t.Fatalf("verify %+v %v", r, err)
	}
}

// Eight writers on one chain: every append lands, positions are 1..n with no
// gap or repeat, ids are unique, and the chain verifies.
func TestConcurrentAppendsStayLinear(t *testing.T) {
	pgtest.EachStore(t, testConcurrentAppendsStayLinear)
}

func testConcurrentAppendsStayLinear(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	const writers, each = 8, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	pos := map[int]bool{}
	ids := map[string]bool{}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				out, err := e.audit.Record(fmt.Sprintf("agent-%d", w), RecordInput{TaskID: id, Type: "reflection", Content: fmt.Sprintf("%d/%d", w, i)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if pos[out.ChainPosition] || ids[out.ThoughtID] {
					t.Errorf("repeated position %d or id %s", out.ChainPosition, out.ThoughtID)
				}
				pos[out.ChainPosition], ids[out.ThoughtID] = true, true
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	for p := 1; p <= writers*each; p++ {
		if !pos[p] {
			t.Fatalf("position %d missing", p)
		}
	}
	list, err := e.audit.List(ListInput{TaskID: &id, Limit: intp(500), VerifyChain: boolp(true)})
	if err != nil || !*list.ChainValid || list.TotalCount != writers*each {
		t.Fatalf("list %d valid=%v err=%v", list.TotalCount, list.ChainValid, err)
	}
}

func TestListFiltersAndErrors(t *testing.T) { pgtest.EachStore(t, testListFiltersAndErrors) }

func testListFiltersAndErrors(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	child := e.task(parent)
	other := e.task("")
	e.think(parent, "p1")
	e.think(child, "c1")
	if _, err := e.audit.Record("bob", RecordInput{TaskID: parent, Type: "risk", Content: "p2"}); err != nil {
		t.Fatal(err)
	}
	e.think(other, "o1")
	for i := 0; i < 5; i++ {
		e.think(parent, fmt.Sprintf("more %d", i))
	}

	l, err := e.audit.List(ListInput{TaskID: &parent, Limit: intp(3)})
	if err != nil {
		t.Fatal(err)
	}
	if l.TotalCount != 7 || l.ThoughtCount != 3 || l.Thoughts[0].Content != "more 2" || l.Thoughts[2].Content != "more 4" {
		t.Fatalf("limit 3 gives the latest three oldest first: %+v", l)
	}
	l, _ = e.audit.List(ListInput{TaskID: &parent, Limit: intp(3), Offset: intp(3)})
	if l.TotalCount != 7 || l.ThoughtCount != 3 || l.Thoughts[0].Content != "p2" || l.Thoughts[2].Content != "more 1" {
		t.Fatalf("offset 3 pages back past the latest three: %+v", l)
	}
	l, _ = e.audit.List(ListInput{TaskID: &parent, Limit: intp(3), Offset: intp(6)})
	if l.TotalCount != 7 || l.ThoughtCount != 1 || l.Thoughts[0].Content != "p1" {
		t.Fatalf("the last page holds what is left: %+v", l)
	}
	l, _ = e.audit.List(ListInput{TaskID: &parent, Offset: intp(7)})
	if l.TotalCount != 7 || l.ThoughtCount != 0 || l.Thoughts == nil {
		t.Fatalf("an offset past the start gives an empty page: %+v", l)
	}
	l, _ = e.audit.List(ListInput{TaskID: &parent, Type: str("risk")})
	if l.TotalCount != 1 || l.Thoughts[0].Content != "p2" {
		t.Fatalf("type filter %+v", l)
	}
	sess, err := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor", Scope: str(ScopeDeep)})
	if err != nil {
		t.Fatal(err)
	}
	l, _ = e.audit.List(ListInput{SessionID: &sess.SessionID})
	var got []string
	for _, th := range l.Thoughts {
		got = append(got, th.Content)
	}
	if strings.Join(got, ",") != "p1,c1,p2,more 0,more 1,more 2,more 3,more 4" {
		t.Fatalf("deep session thoughts in recorded order: %v", got)
	}
	l, _ = e.audit.List(ListInput{SessionID: &sess.SessionID, TaskID: &child})
	if l.TotalCount != 1 || l.Thoughts[0].Content != "c1" {
		t.Fatalf("task within session %+v", l)
	}

	_, err = e.audit.List(ListInput{})
	wantErr(t, err, 400, errs.InvalidInput, "task_id", "required")
	_, err = e.audit.List(ListInput{TaskID: str("T-99")})
	wantErr(t, err, 404, errs.TaskNotFound, "task_id", "exists")
	_, err = e.audit.List(ListInput{SessionID: str("A-99")})
	wantErr(t, err, 404, errs.SessionNotFound, "session_id", "exists")
	_, err = e.audit.List(ListInput{SessionID: &sess.SessionID, TaskID: &other})
	wantErr(t, err, 400, errs.InvalidInput, "task_id", "in_scope")
	_, err = e.audit.List(ListInput{TaskID: &parent, Limit: intp(0)})
	wantErr(t, err, 400, errs.InvalidInput, "limit", "minimum")
	_, err = e.audit.List(ListInput{TaskID: &parent, Limit: intp(501)})
	wantErr(t, err, 400, errs.InvalidInput, "limit", "maximum")
	if _, err = e.audit.List(ListInput{TaskID: &parent, Limit: intp(500)}); err != nil {
		t.Fatalf("limit 500 refused: %v", err)
	}
	_, err = e.audit.List(ListInput{TaskID: &parent, Offset: intp(-1)})
	wantErr(t, err, 400, errs.InvalidInput, "offset", "minimum")
	_, err = e.audit.List(ListInput{TaskID: &parent, Type: str("idea")})
	wantErr(t, err, 400, errs.InvalidInput, "type", "enum")
}

func TestSessionStartErrors(t *testing.T) { pgtest.EachStore(t, testSessionStartErrors) }

func testSessionStartErrors(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	out, err := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "a"})
	if err != nil || out.SessionID != "A-1" || out.Scope != ScopeShallow {
		t.Fatalf("start %+v %v", out, err)
	}
	_, err = e.audit.StartSession(StartInput{TaskID: "T-42", AuditorID: "a"})
	wantErr(t, err, 404, errs.TaskNotFound, "task_id", "exists")
	_, err = e.audit.StartSession(StartInput{TaskID: id, AuditorID: ""})
	wantErr(t, err, 400, errs.InvalidInput, "auditor_id", "minLength")
	_, err = e.audit.StartSession(StartInput{TaskID: id, AuditorID: "a", Scope: str("wide")})
	wantErr(t, err, 400, errs.InvalidInput, "scope", "enum")
	_, err = e.audit.StartSession(StartInput{TaskID: id, AuditorID: "a", Reason: str(strings.Repeat("r", MaxReasonLen+1))})
	wantErr(t, err, 400, errs.InvalidInput, "reason", "maxLength")
	// A refused start consumes no session number.
	next, _ := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "a"})
	if next.SessionID != "A-2" {
		t.Fatalf("next session %s, want A-2", next.SessionID)
	}
}

// tamper rewrites a stored link in place through fn, as an attacker with
// access to the store file would.
func tamper(t *testing.T, e *env, task string, chain byte, pos int, fn func(b *linkBody)) {
	t.Helper()
	n, _ := tasks.ParseTaskID(task)
	err := e.st.Update(func(tx kv.Tx) error {
		l, ok, err := getLink(tx, n, chain, pos)
		if err != nil || !ok {
			return fmt.Errorf("link %s/%c/%d: ok=%v %v", task, chain, pos, ok, err)
		}
		fn(&l.body)
		return tx.Bucket([]byte(store.BucketChainLinks)).Put(linkKey(n, chain, pos), encodeLink(&l))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTamperingIsReportedExactly(t *testing.T) {
	pgtest.EachStore(t, testTamperingIsReportedExactly)
}

func testTamperingIsReportedExactly(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	var recs []RecordOutput
	for i := 0; i < 6; i++ {
		recs = append(recs, e.think(id, fmt.Sprintf("thought %d", i)))
	}
	sess, _ := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "auditor"})

	// Rewrite the content of position 3: only its own hash breaks, and the
	// report carries the recomputed (expected) and stored (actual) hash.
	tamper(t, e, id, chainThought, 3, func(b *linkBody) { b.Content = "something else" })
	forged, _ := trail.HashRecord(trail.Fields{TaskID: id, Type: "decision", Content: "something else", PreviousHash: recs[1].Hash, RecordedAt: recs[2].RecordedAt, RecordedBy: "bob"})
	r, err := e.audit.Verify(VerifyInput{SessionID: &sess.SessionID, FullTrace: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if r.ChainValid || len(r.BrokenLinks) != 1 || r.TotalRecords != 7 {
		t.Fatalf("report %+v", r)
	}
	b := r.BrokenLinks[0]
	if b.Position != 3 || b.ExpectedHash != forged || b.ActualHash != recs[2].Hash || b.Chain != trail.ChainThought || b.RecordID != recs[2].ThoughtID {
		t.Fatalf("broken link %+v, want position 3 expected %s actual %s", b, forged, recs[2].Hash)
	}
	if r.IntegrityScore != 86 { // round(100 × 6/7)
		t.Fatalf("integrity %d, want 86", r.IntegrityScore)
	}
	if len(r.Trace) != 7 || r.Trace[3].Verdict != trail.VerdictBroken || r.Trace[3].StoredHash != recs[2].Hash {
		t.Fatalf("trace %+v", r.Trace)
	}

	// Rewrite the back-link of position 5 too: position 5 breaks as well.
	tamper(t, e, id, chainThought, 5, func(b *linkBody) { b.PreviousHash = str(strings.Repeat("0", 64)) })
	l, err := e.audit.List(ListInput{TaskID: &id, VerifyChain: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if *l.ChainValid || fmt.Sprint(l.InvalidLinks) != "[3 5]" {
		t.Fatalf("invalid links %v", l.InvalidLinks)
	}
	r, _ = e.audit.Verify(VerifyInput{TaskID: &id})
	if r.IntegrityScore != 71 || len(r.BrokenLinks) != 2 { // round(100 × 5/7)
		t.Fatalf("after two tamperings %+v", r)
	}
	// The event chain is untouched.
	if r.BrokenLinks[0].Chain != trail.ChainThought || r.BrokenLinks[1].Chain != trail.ChainThought {
		t.Fatalf("broken chains %+v", r.BrokenLinks)
	}
}

func TestVerifyErrors(t *testing.T) { pgtest.EachStore(t, testVerifyErrors) }

func testVerifyErrors(t *testing.T) {
	e := newEnv(t)
	id := e.task("")
	other := e.task("")
	sess, _ := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "a"})
	_, err := e.audit.Verify(VerifyInput{})
	wantErr(t, err, 400, errs.InvalidInput, "session_id", "required")
	_, err = e.audit.Verify(VerifyInput{SessionID: str("A-9")})
	wantErr(t, err, 404, errs.NotFound, "session_id", "exists")
	_, err = e.audit.Verify(VerifyInput{TaskID: str("T-9")})
	wantErr(t, err, 404, errs.NotFound, "task_id", "exists")
	_, err = e.audit.Verify(VerifyInput{SessionID: &sess.SessionID, TaskID: &other})
	wantErr(t, err, 400, errs.InvalidInput, "task_id", "in_scope")
	r, err := e.audit.Verify(VerifyInput{SessionID: &sess.SessionID, TaskID: &id})
	if err != nil || r.TotalRecords != 1 || r.IntegrityScore != 100 {
		t.Fatalf("task within session %+v %v", r, err)
	}
}

// leafOrder returns the raw hashes of hexes, for an independent root.
func leavesOf(t *testing.T, hexes []string) [][]byte {
	out := make([][]byte, len(hexes))
	for i, h := range hexes {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 32 {
			t.Fatalf("bad hash %q", h)
		}
		out[i] = b
	}
	return out
}

// refRoot is D12 written plainly: split at the largest power of two below n.
func refRoot(leaves [][]byte) []byte {
	switch len(leaves) {
	case 0:
		s := sha256.Sum256(nil)
		return s[:]
	case 1:
		return leaves[0]
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := refRoot(leaves[:k]), refRoot(leaves[k:])
	s := sha256.Sum256(append(append([]byte{}, l...), r...))
	return s[:]
}

func TestMerkleFinalizeFreezes(t *testing.T) { pgtest.EachStore(t, testMerkleFinalizeFreezes) }

func testMerkleFinalizeFreezes(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	child := e.task(parent)
	grandchild := e.task(child)
	unrelated := e.task("")
	// Records in scope, in recorded order: the three task_created events,
	// then thoughts; the unrelated task's records stay out.
	var hashes []string
	for _, id := range []string{parent, child, grandchild} {
		var h string
		_ = e.st.View(func(tx kv.Tx) error {
			n, _ := tasks.ParseTaskID(id)
			l, _, _ := getLink(tx, n, chainEvent, 1)
			h = l.hashHex()
			return nil
		})
		hashes = append(hashes, h)
	}
	e.think(unrelated, "not in scope")
	hashes = append(hashes, e.think(grandchild, "g").Hash, e.think(parent, "p").Hash)

	sess, _ := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor", Scope: str(ScopeDeep)})
	open1, err := e.audit.Root(RootInput{SessionID: sess.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	want := hex.EncodeToString(refRoot(leavesOf(t, hashes)))
	if open1.MerkleRoot != want || open1.IsFinalized || open1.LeafCount != 5 {
		t.Fatalf("open root %+v, want %s over 5 leaves", open1, want)
	}
	fin, err := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if fin.MerkleRoot != want || fin.LeafCount != 5 || fin.TreeDepth != 3 || !fin.Frozen {
		t.Fatalf("finalize %+v", fin)
	}
	_, err = e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID})
	wantErr(t, err, 409, errs.AlreadyFinalized, "session_id", "")

	// Later records move an open session's root, never a frozen one.
	other, _ := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor", Scope: str(ScopeDeep)})
	before, _ := e.audit.Root(RootInput{SessionID: other.SessionID})
	late := e.think(child, "late")
	e.task(grandchild) // a new descendant joins the open deep scope
	after, _ := e.audit.Root(RootInput{SessionID: other.SessionID})
	frozen, _ := e.audit.Root(RootInput{SessionID: sess.SessionID})
	if frozen.MerkleRoot != want || !frozen.IsFinalized || frozen.AsOf != fin.FinalizedAt {
		t.Fatalf("frozen root moved: %+v", frozen)
	}
	if after.MerkleRoot == before.MerkleRoot || after.LeafCount != before.LeafCount+2 {
		t.Fatalf("open root did not move: before %+v after %+v", before, after)
	}
	if after.AsOf < late.RecordedAt {
		t.Fatalf("as_of %s before the latest record %s", after.AsOf, late.RecordedAt)
	}
	if n := strings.Count(strings.Join(e.events, " "), EventAuditFinalized); n != 1 {
		t.Fatalf("%d audit.finalized events", n)
	}
}

func TestMerkleFinalizeRestrictedAndErrors(t *testing.T) {
	pgtest.EachStore(t, testMerkleFinalizeRestrictedAndErrors)
}

func testMerkleFinalizeRestrictedAndErrors(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	child := e.task(parent)
	other := e.task("")
	c1 := e.think(child, "c1")
	e.think(parent, "p1")
	sess, _ := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "a", Scope: str(ScopeDeep)})
	_, err := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID, TaskID: &other})
	wantErr(t, err, 400, errs.InvalidInput, "task_id", "in_scope")
	_, err = e.audit.Finalize(FinalizeInput{SessionID: "A-77"})
	wantErr(t, err, 404, errs.SessionNotFound, "session_id", "exists")
	_, err = e.audit.Root(RootInput{SessionID: "A-77"})
	wantErr(t, err, 404, errs.SessionNotFound, "session_id", "exists")
	fin, err := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID, TaskID: &child})
	if err != nil {
		t.Fatal(err)
	}
	var created string
	_ = e.st.View(func(tx kv.Tx) error {
		n, _ := tasks.ParseTaskID(child)
		l, _, _ := getLink(tx, n, chainEvent, 1)
		created = l.hashHex()
		return nil
	})
	want := hex.EncodeToString(refRoot(leavesOf(t, []string{created, c1.Hash})))
	if fin.LeafCount != 2 || fin.MerkleRoot != want || fin.TaskID != child || fin.TreeDepth != 1 {
		t.Fatalf("restricted finalize %+v, want root %s", fin, want)
	}
	// An empty session freezes the root of no leaves.
	empty, _ := e.audit.StartSession(StartInput{TaskID: other, AuditorID: "a"})
	_, _ = e.tasks.Get(tasks.GetInput{TaskID: other})
	fin2, err := e.audit.Finalize(FinalizeInput{SessionID: empty.SessionID})
	if err != nil || fin2.LeafCount != 1 || fin2.TreeDepth != 0 {
		t.Fatalf("single-record finalize %+v %v", fin2, err)
	}
}

func TestEmptyRootIsSHA256OfNothing(t *testing.T) {
	t.Parallel()
	got := hex.EncodeToString(rootOf(nil))
	if got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty root %s", got)
	}
}

func TestExportBuildsAVerifiableBundle(t *testing.T) {
	pgtest.EachStore(t, testExportBuildsAVerifiableBundle)
}

func testExportBuildsAVerifiableBundle(t *testing.T) {
	e := newEnv(t)
	parent := e.task("")
	child := e.task(parent)
	e.think(parent, "p")
	e.think(child, "c <&> \u2028 ✓")
	sess, _ := e.audit.StartSession(StartInput{TaskID: parent, AuditorID: "auditor", Scope: str(ScopeDeep)})
	_, _, _, err := e.audit.Export(sess.SessionID)
	wantErr(t, err, 409, errs.Conflict, "", "")
	fin, _ := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID})
	e.think(parent, "after the seal") // not part of the frozen set

	meta, records, root, err := e.audit.Export(sess.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if root != fin.MerkleRoot || uint64(len(records)) != fin.LeafCount || len(meta.TaskIDs) != 2 {
		t.Fatalf("export root %s records %d tasks %v, finalize %+v", root, len(records), meta.TaskIDs, fin)
	}
	signer, vkey, err := bundle.LoadOrCreateKey(bundle.KeyPath(t.TempDir(), ""), "cairn-test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.BuildBundle(meta, records, root, signer)
	if err != nil {
		t.Fatal(err)
	}
	if err := bundle.VerifyBundle(b, vkey); err != nil {
		t.Fatalf("fresh bundle does not verify: %v", err)
	}
	// The same tampering the store test does, applied to the bundle, fails.
	b.Records[3].Content = "rewritten"
	if err := bundle.VerifyBundle(b, vkey); err == nil {
		t.Fatal("tampered bundle verified")
	}
	// And tampering the store makes export refuse to sign.
	tamper(t, e, child, chainThought, 1, func(lb *linkBody) { lb.Content = "rewritten" })
	meta, records, root, err = e.audit.Export(sess.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.BuildBundle(meta, records, root, signer); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("export of a tampered store signed: %v", err)
	}
}

// The link codec round-trips every field, refuses damaged values, and never
// panics on arbitrary bytes.
func TestLinkCodec(t *testing.T) {
	t.Parallel()
	prev := strings.Repeat("ab", 32)
	bodies := []linkBody{
		{ID: "Θ-1", Type: "decision", Content: "c \u2028 <&> ✓", RecordedAt: "2026-11-22T08:40:12.123Z", RecordedBy: "a"},
		{ID: "T-2/event/3", Type: "task_updated", Content: `{"status":"todo"}`, PreviousHash: &prev, RecordedAt: "x", RecordedBy: "b",
			Branch: "main", CommitSHA: "abc", TestsRun: []string{"go test", "x"}, Blockers: []string{"y"}, Metadata: json.RawMessage(`{"a":1}`)},
		{ID: "Θ-3", Type: "risk", Content: "traced", RecordedAt: "x", RecordedBy: "c", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
	}
	for _, b := range bodies {
		// A link without a trace id keeps the version 1 layout, byte for
		// byte; one with it is version 2 (D38).
		if want := map[bool]byte{false: linkFormat, true: linkFormatTrace}[b.TraceID != ""]; encodeBody(nil, &b)[0] != want {
			t.Fatalf("%s encoded as version %d, want %d", b.ID, encodeBody(nil, &b)[0], want)
		}
		enc := encodeBody(nil, &b)
		var got linkBody
		if err := decodeBody(enc, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, b) {
			t.Fatalf("round trip: %+v → %+v", b, got)
		}
		for cut := 0; cut < len(enc); cut++ {
			if err := decodeBody(enc[:cut], &got); err == nil {
				t.Fatalf("truncated value (%d of %d bytes) decoded", cut, len(enc))
			}
		}
		if err := decodeBody(append(enc, 0), &got); err == nil {
			t.Fatal("value with trailing bytes decoded")
		}
	}
}

func FuzzLinkCodec(f *testing.F) {
	b := linkBody{ID: "Θ-1", Type: "risk", Content: "x", TestsRun: []string{"t"}}
	f.Add(encodeBody(nil, &b))
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var got linkBody
		if decodeBody(data, &got) != nil {
			return
		}
		again := encodeBody(nil, &got)
		var back linkBody
		if err := decodeBody(again, &back); err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("re-encoding a decoded value changed it: %v", err)
		}
	})
}
