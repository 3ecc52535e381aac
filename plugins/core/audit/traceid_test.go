package audit

import (
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/trail"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

func TestTraceIDBesideTheRecord(t *testing.T) { pgtest.EachStore(t, testTraceIDBesideTheRecord) }

// A traced call's trace id is kept beside the thought record or task event
// it writes, shown by thought_record_list, audit_verify_chain's trace and
// the export, and left out of the hash: the chain is what it would be
// untraced (docs/decisions.md D38).
func testTraceIDBesideTheRecord(t *testing.T) {
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	e := newEnv(t)
	created, err := e.tasks.CreateFor(tasks.Call{Actor: "alice", TraceID: traceID}, tasks.CreateInput{Title: "traced", Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.TaskID
	thought, err := e.audit.RecordOnce("bob", idempotency.Key{}, traceID, RecordInput{TaskID: id, Type: "decision", Content: "traced"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := trail.HashRecord(trail.Fields{TaskID: id, Type: "decision", Content: "traced", RecordedAt: thought.RecordedAt, RecordedBy: "bob"})
	if thought.Hash != want {
		t.Fatalf("a traced record hashed to %s, want %s: the trace id reached the hash", thought.Hash, want)
	}
	plain := e.think(id, "untraced")
	list, err := e.audit.List(ListInput{TaskID: &id, VerifyChain: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if list.ChainValid == nil || !*list.ChainValid {
		t.Fatalf("chain with a traced record does not verify: %+v", list)
	}
	got := map[string]string{}
	for _, th := range list.Thoughts {
		got[th.ThoughtID] = th.TraceID
	}
	if got[thought.ThoughtID] != traceID || got[plain.ThoughtID] != "" {
		t.Fatalf("trace ids listed %v, want %s on %s only", got, traceID, thought.ThoughtID)
	}

	verified, err := e.audit.Verify(VerifyInput{TaskID: &id, FullTrace: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	traced := map[string]string{}
	for _, tr := range verified.Trace {
		traced[tr.RecordID] = tr.TraceID
	}
	if traced[thought.ThoughtID] != traceID || traced[id+"/event/1"] != traceID || traced[plain.ThoughtID] != "" {
		t.Fatalf("audit_verify_chain's trace shows trace ids %v, want %s on %s and the task_created event only", traced, traceID, thought.ThoughtID)
	}

	sess, err := e.audit.StartSession(StartInput{TaskID: id, AuditorID: "auditor"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.audit.Finalize(FinalizeInput{SessionID: sess.SessionID}); err != nil {
		t.Fatal(err)
	}
	_, records, _, err := e.audit.Export(sess.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]string{}
	for _, r := range records {
		exported[r.ID] = r.TraceID
	}
	event := id + "/event/1" // task_created, written by the traced create
	if exported[thought.ThoughtID] != traceID || exported[event] != traceID || exported[plain.ThoughtID] != "" {
		t.Fatalf("trace ids exported %v, want %s on %s and %s only", exported, traceID, thought.ThoughtID, event)
	}
}
