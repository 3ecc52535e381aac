package tasks

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/store"
)

// churn creates n tasks and moves each through a few states, several
// writes per task between flushes, so pending entries hold states older
// than the task's previous one.
func churn(t *testing.T, svc *Service, n int) {
	t.Helper()
	for _, p := range []string{"alpha", "beta"} {
		if _, err := svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		out, err := svc.Create("lead", CreateInput{Title: fmt.Sprint("task ", i), Project: []string{"alpha", "beta"}[i%2],
			Priority: ptr(Priorities[i%4]), Labels: []string{fmt.Sprint("l", i%3)}})
		if err != nil {
			t.Fatal(err)
		}
		steps := []UpdateInput{
			{Status: ptr(StatusTodo), Assignee: ptr(fmt.Sprint("agent-", i%3))},
			{Status: ptr(StatusInProgress), Progress: ptr(float64(i % 9 * 10)), Labels: &[]string{"l9"}},
			{Priority: ptr(Priorities[(i+1)%4])},
			{Status: ptr(StatusCancelled)},
		}
		for _, u := range steps[:i%5%4+1] {
			u.TaskID = out.TaskID
			if _, err := svc.Update("lead", u); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// rebuiltIndexes settles st's list indexes, then builds them again from
// the stored tasks alone, and returns both.
func rebuiltIndexes(t *testing.T, st *store.Store, clock *testClock) (settled, rebuilt map[string]string) {
	t.Helper()
	if err := ViewSettled(st, func(kv.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	settled = dumpBuckets(t, st, listIndexBuckets)
	if err := st.Update(func(tx kv.Tx) error { return setListIndexUpto(tx, 0) }); err != nil {
		t.Fatal(err)
	}
	svc := New(st, Config{Clock: clock.now})
	if err := svc.IndexError(); err != nil {
		t.Fatal(err)
	}
	return settled, dumpBuckets(t, st, listIndexBuckets)
}

// TestListEntriesWaitAndReadsSettle: a write leaves its task's list
// entries pending (one key) instead of writing them; a read settles them
// first, so it sees every write; and the settled indexes are byte for byte
// those built from the stored tasks.
func TestListEntriesWaitAndReadsSettle(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "core.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	churn(t, svc, 60)
	pending := dumpBuckets(t, st, []string{store.BucketTaskListPending})
	if len(pending) == 0 {
		t.Fatal("no list entries pending after 60 tasks' writes")
	}
	// Read your writes: the last task moved to in_progress by agent-2.
	out, err := svc.List(ListInput{Status: []string{StatusInProgress}, Assignee: ptr("agent-2"), Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if out.TotalCount == 0 || len(out.Tasks) != out.TotalCount {
		t.Fatalf("in_progress for agent-2: %d of %d", len(out.Tasks), out.TotalCount)
	}
	if left := dumpBuckets(t, st, []string{store.BucketTaskListPending}); len(left) != 0 {
		t.Fatalf("%d entries still pending after a read", len(left))
	}
	settled, rebuilt := rebuiltIndexes(t, st, clock)
	if !maps.Equal(settled, rebuilt) {
		t.Fatalf("settled indexes (%d entries) differ from a rebuild (%d)", len(settled), len(rebuilt))
	}
}

// TestPendingListEntriesSurviveAStop: entries left pending by a plugin that
// stopped without flushing are moved when the store opens again.
func TestPendingListEntriesSurviveAStop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	churn(t, New(st, Config{Clock: clock.now}), 40)
	if len(dumpBuckets(t, st, []string{store.BucketTaskListPending})) == 0 {
		t.Fatal("nothing pending")
	}
	if err := st.Close(); err != nil { // no Service.Close: as if killed
		t.Fatal(err)
	}
	st2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if err := New(st2, Config{Clock: clock.now}).IndexError(); err != nil {
		t.Fatal(err)
	}
	if left := dumpBuckets(t, st2, []string{store.BucketTaskListPending}); len(left) != 0 {
		t.Fatalf("%d entries still pending after open", len(left))
	}
	settled, rebuilt := rebuiltIndexes(t, st2, clock)
	if !maps.Equal(settled, rebuilt) {
		t.Fatalf("indexes after a stop (%d entries) differ from a rebuild (%d)", len(settled), len(rebuilt))
	}
}
