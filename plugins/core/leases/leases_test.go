package leases

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// The mirror (docs/decisions.md D39): an issued lease shows until it is
// returned or expires (and an expired one leaves with the next event), a redelivered event changes nothing, a task's
// leases do not leak into a task whose id it prefixes, and an event
// without ids is refused naming its data.
func TestMirror(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "core.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	in := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	for _, ev := range []struct{ typ, data string }{
		{EventIssued, `{"leaseId":"L-1","taskId":"T-1","scope":["a/"],"expiresAt":"` + in(time.Hour) + `"}`},
		{EventIssued, `{"leaseId":"L-1","taskId":"T-1","scope":["a/"],"expiresAt":"` + in(time.Hour) + `"}`},
		{EventIssued, `{"leaseId":"L-2","taskId":"T-10","expiresAt":"` + in(time.Hour) + `"}`},
		{EventIssued, `{"leaseId":"L-3","taskId":"T-1","expiresAt":"` + in(-time.Second) + `"}`},
		{EventIssued, `{"leaseId":"L-4","taskId":"T-1","expiresAt":"` + in(time.Hour) + `"}`},
		{EventReturned, `{"leaseId":"L-4","taskId":"T-1","returnedAt":"` + in(0) + `"}`},
	} {
		if err := Apply(st, ev.typ, []byte(ev.data), now); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ForTasks(st, []string{"T-1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].LeaseID != "L-1" || got[0].Scope[0] != "a/" {
		t.Fatalf("T-1's leases %+v, want L-1 alone", got)
	}
	// The expired lease left the mirror with the next event: it holds
	// only open leases.
	var held []string
	if err := st.View(func(tx kv.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, _ []byte) error { held = append(held, string(k)); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 {
		t.Fatalf("the mirror holds %q, want L-1 and L-2 only", held)
	}
	err = Apply(st, EventIssued, []byte(`{"taskId":"T-1"}`), now)
	if e, ok := errs.As(err); !ok || e.Status != 400 || e.Details["field"] != "data" {
		t.Fatalf("event without a leaseId: %v", err)
	}
}
