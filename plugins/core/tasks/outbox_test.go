package tasks

import (
	"encoding/json"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// TestWritesRecordTheirEventsInTheOutbox: with Record wired to the store's
// outbox (as the core plugin does), a committed create and update leave
// their events there, a failed or replayed write leaves none.
func TestWritesRecordTheirEventsInTheOutbox(t *testing.T) {
	pgtest.EachStore(t, testWritesRecordTheirEventsInTheOutbox)
}

func testWritesRecordTheirEventsInTheOutbox(t *testing.T) {
	f := newFixture(t, "demo")
	f.svc.cfg.Record = func(tx kv.Tx, typ string, data map[string]any, at time.Time) error {
		_, err := f.st.RecordEvent(tx, typ, data, at)
		return err
	}
	outbox := func() []store.OutboxEvent {
		t.Helper()
		evs, err := f.st.ClaimEvents("test", time.Now(), time.Millisecond, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.st.DoneEvents(evs); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	call := Call{Actor: "agent-1", Idem: idempotency.Key{Key: "k1"}}
	out, err := f.svc.CreateFor(call, CreateInput{Title: "one", Project: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	evs := outbox()
	if len(evs) != 1 || evs[0].Type != EventCreated {
		t.Fatalf("outbox after a create: %+v", evs)
	}
	var data map[string]any
	if err := json.Unmarshal(evs[0].Data, &data); err != nil || data["task_id"] != out.TaskID {
		t.Fatalf("recorded data %s (%v), want task_id %s", evs[0].Data, err, out.TaskID)
	}
	if _, err := f.svc.CreateFor(call, CreateInput{Title: "one", Project: "demo"}); err != nil {
		t.Fatal(err)
	}
	if evs := outbox(); len(evs) != 0 {
		t.Fatalf("a replayed create recorded %d events", len(evs))
	}
	if _, err := f.svc.Create("agent-1", CreateInput{Title: "orphan", Project: "demo", ParentID: ptr("T-999")}); err == nil {
		t.Fatal("a create under a missing parent succeeded")
	}
	if evs := outbox(); len(evs) != 0 {
		t.Fatalf("a failed create recorded %d events", len(evs))
	}
	if _, err := f.svc.Update("agent-1", UpdateInput{TaskID: out.TaskID, Status: ptr("todo")}); err != nil {
		t.Fatal(err)
	}
	evs = outbox()
	if len(evs) == 0 {
		t.Fatal("an update recorded no event")
	}
	for _, ev := range evs {
		if ev.Type != EventUpdated {
			t.Fatalf("unexpected event %s", ev.Type)
		}
	}
}
