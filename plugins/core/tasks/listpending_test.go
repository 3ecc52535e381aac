package tasks

import (
	"encoding/binary"
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
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

// derivedOf is what the entries derive(rec) names must hold for the tasks
// st stores, as dumpBuckets lists them.
func derivedOf(t *testing.T, st *store.Store, derive func(rec *record, out map[string]string)) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.View(func(tx kv.Tx) error {
		return tasksBucket(tx).ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return nil
			}
			var raw rawRecord
			if err := decodeRaw(binary.BigEndian.Uint64(k), v, &raw); err != nil {
				return err
			}
			derive(raw.materialize(), out)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// statusIndexesOf is what the by-project and by-status indexes must hold.
func statusIndexesOf(t *testing.T, st *store.Store) map[string]string {
	return derivedOf(t, st, func(rec *record, out map[string]string) {
		out[store.BucketTasksByProject+"\x00"+string(keyProject(rec.project, rec.num))] = ""
		out[store.BucketTasksByProjectStatus+"\x00"+string(keyProjectStatus(rec.project, statusName(rec.status), rec.num))] = ""
		out[store.BucketTasksByStatus+"\x00"+string(keyStatus(statusName(rec.status), rec.num))] = ""
	})
}

// searchTextsOf is what the search text bucket must hold.
func searchTextsOf(t *testing.T, st *store.Store) map[string]string {
	return derivedOf(t, st, func(rec *record, out map[string]string) {
		out[store.BucketTaskSearchText+"\x00"+string(store.U64(rec.num))] = string(searchTextValue(rec))
	})
}

var searchTextBuckets = []string{store.BucketTaskSearchText}

var statusIndexBuckets = []string{store.BucketTasksByProject, store.BucketTasksByProjectStatus, store.BucketTasksByStatus}

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
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "core.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	churn(t, svc, 60)
	// Stop the background flusher, so what the next writes defer stays
	// pending until a read moves it.
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		out, err := svc.Create("lead", CreateInput{Title: fmt.Sprint("late ", i), Project: "alpha", Labels: []string{"late"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Update("lead", UpdateInput{TaskID: out.TaskID, Status: ptr(StatusTodo), Assignee: ptr("agent-2")}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Update("lead", UpdateInput{TaskID: FormatTaskID(uint64(i + 1)), Priority: ptr(PriorityCritical)}); err != nil {
			t.Fatal(err)
		}
	}
	pending := dumpBuckets(t, st, []string{store.BucketTaskListPending})
	if len(pending) == 0 {
		t.Fatal("no entries pending after 60 tasks' writes")
	}
	if got, want := dumpBuckets(t, st, statusIndexBuckets), statusIndexesOf(t, st); maps.Equal(got, want) {
		t.Fatal("the status indexes were written with the tasks, not deferred")
	}
	if got, want := dumpBuckets(t, st, searchTextBuckets), searchTextsOf(t, st); maps.Equal(got, want) {
		t.Fatal("the search texts were written with the tasks, not deferred")
	}
	// Read your writes, by search: the late tasks whose number holds a 1,
	// now critical only when among the first 20.
	found, err := svc.List(ListInput{Search: ptr("late 1"), Priority: []string{PriorityNormal}, Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if found.TotalCount != 11 { // late 1, late 10..19
		t.Fatalf("search for late 1 found %d tasks, want 11", found.TotalCount)
	}
	// Read your writes: the 20 late tasks are todo, assigned to agent-2.
	out, err := svc.List(ListInput{Status: []string{StatusTodo}, Assignee: ptr("agent-2"), Label: ptr("late"), Limit: ptr(100)})
	if err != nil {
		t.Fatal(err)
	}
	if out.TotalCount != 20 || len(out.Tasks) != 20 {
		t.Fatalf("late todo tasks of agent-2: %d of %d, want 20", len(out.Tasks), out.TotalCount)
	}
	if left := dumpBuckets(t, st, []string{store.BucketTaskListPending}); len(left) != 0 {
		t.Fatalf("%d entries still pending after a read", len(left))
	}
	settled, rebuilt := rebuiltIndexes(t, st, clock)
	if !maps.Equal(settled, rebuilt) {
		t.Fatalf("settled indexes (%d entries) differ from a rebuild (%d)", len(settled), len(rebuilt))
	}
	if got, want := dumpBuckets(t, st, statusIndexBuckets), statusIndexesOf(t, st); !maps.Equal(got, want) {
		t.Fatalf("settled status indexes (%d entries) differ from the tasks' (%d)", len(got), len(want))
	}
	if got, want := dumpBuckets(t, st, searchTextBuckets), searchTextsOf(t, st); !maps.Equal(got, want) {
		t.Fatalf("settled search texts (%d) differ from the tasks' (%d)", len(got), len(want))
	}
}

// TestPendingListEntriesSurviveAStop: entries left pending by a plugin that
// stopped without flushing are moved when the store opens again.
func TestPendingListEntriesSurviveAStop(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "core.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	churn(t, svc, 40)
	if err := svc.Close(); err != nil { // no flusher from here on
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if _, err := svc.Update("lead", UpdateInput{TaskID: FormatTaskID(uint64(i)), Priority: ptr(PriorityCritical), Labels: &[]string{"after"}}); err != nil {
			t.Fatal(err)
		}
	}
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
	if got, want := dumpBuckets(t, st2, statusIndexBuckets), statusIndexesOf(t, st2); !maps.Equal(got, want) {
		t.Fatalf("status indexes after a stop (%d entries) differ from the tasks' (%d)", len(got), len(want))
	}
}

// TestPostgresWritesIndexesWithTheTask: on PostgreSQL nothing is deferred,
// since settling would take the writers' cluster-wide lock for a read
// (docs/decisions.md D40): the indexes hold every write as it commits.
func TestPostgresWritesIndexesWithTheTask(t *testing.T) {
	t.Parallel()
	st, err := store.OpenPostgres(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := newClock()
	svc := New(st, Config{Clock: clock.now})
	if err := svc.Close(); err != nil { // no flusher: only the writes write
		t.Fatal(err)
	}
	churn(t, svc, 20)
	if left := dumpBuckets(t, st, []string{store.BucketTaskListPending}); len(left) != 0 {
		t.Fatalf("%d entries pending on PostgreSQL", len(left))
	}
	if got, want := dumpBuckets(t, st, statusIndexBuckets), statusIndexesOf(t, st); !maps.Equal(got, want) {
		t.Fatalf("status indexes (%d entries) differ from the tasks' (%d)", len(got), len(want))
	}
	if got, want := dumpBuckets(t, st, searchTextBuckets), searchTextsOf(t, st); !maps.Equal(got, want) {
		t.Fatalf("search texts (%d) differ from the tasks' (%d)", len(got), len(want))
	}
	// Creates ran as shared writes: their counts wait in this server's
	// shards until a fold (at open and close) adds them in.
	if shards := dumpBuckets(t, st, []string{store.BucketTaskCountShards}); len(shards) == 0 {
		t.Fatal("no counter shards after shared creates")
	}
	if err := svc.foldShards(); err != nil {
		t.Fatal(err)
	}
	if shards := dumpBuckets(t, st, []string{store.BucketTaskCountShards}); len(shards) != 0 {
		t.Fatalf("%d counter shards left after a fold", len(shards))
	}
	written := dumpBuckets(t, st, listIndexBuckets)
	_, rebuilt := rebuiltIndexes(t, st, clock)
	if !maps.Equal(written, rebuilt) {
		t.Fatalf("list indexes as written (%d entries) differ from a rebuild (%d)", len(written), len(rebuilt))
	}
}
