package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/importer"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// wired opens a store in a fresh dir with the task service and the
// decision trail wired as the plugin wires them, on a frozen clock.
func wired(t testing.TB) (*store.Store, *tasks.Service) {
	t.Helper()
	st, err := store.Open(t.TempDir()+"/core.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc := wire(t, st, nil)
	if _, err := svc.AddProject("imp"); err != nil {
		t.Fatal(err)
	}
	return st, svc
}

// wire builds the services over st; fail, when set, runs before each
// chain append and may refuse it (a failure in the middle of a write).
func wire(t testing.TB, st *store.Store, fail func(tasks.Change) error) *tasks.Service {
	at := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	aud := audit.New(st, audit.Config{Record: recordEventIn(st)})
	onChange := aud.AppendTaskChange
	if fail != nil {
		onChange = func(tx kv.Tx, ch tasks.Change) error {
			if err := fail(ch); err != nil {
				return err
			}
			return aud.AppendTaskChange(tx, ch)
		}
	}
	svc := tasks.New(st, tasks.Config{Clock: clock, Record: recordEventIn(st), OnChange: onChange, ThoughtTrail: aud.ThoughtTrail, ImportedText: aud.ImportedText})
	t.Cleanup(func() { _ = svc.Close() })
	return svc
}

// An import interrupted after its first batches (here by a write that
// fails, as a crash would stop it) is completed when the store is next
// opened, and leaves exactly what an uninterrupted import leaves.
func TestImportInterruptedCompletesOnOpen(t *testing.T) {
	t.Parallel()
	const n = 2500
	sample := importSample(n)
	whole, svc := wired(t)
	if _, err := svc.Import(tasks.Call{Actor: "op"}, "imp", sample); err != nil {
		t.Fatal(err)
	}
	if err := svc.FlushPending(); err != nil {
		t.Fatal(err)
	}

	path := t.TempDir() + "/core.db"
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The second batch fails: the first is committed, the rest is not.
	broken := wire(t, st, func(ch tasks.Change) error {
		if ch.Kind == tasks.ChangeCreated && ch.Num > 1500 {
			return errors.New("the disk went away")
		}
		return nil
	})
	if _, err := broken.AddProject("imp"); err != nil {
		t.Fatal(err)
	}
	if _, err := broken.Import(tasks.Call{Actor: "op"}, "imp", sample); err == nil {
		t.Fatal("the failing import reported success")
	}
	if _, err := broken.Import(tasks.Call{Actor: "op"}, "imp", sample[:1]); err == nil {
		t.Fatal("a second import started beside the interrupted one")
	}
	if err := broken.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	resumed := wire(t, st, nil)
	done, err := resumed.ResumeImport()
	if err != nil || done != n-tasks.ImportBatch {
		t.Fatalf("resumed %d tasks of %d: %v", done, n, err)
	}
	if again, err := resumed.ResumeImport(); again != 0 || err != nil {
		t.Fatalf("a finished import resumed again: %d %v", again, err)
	}
	if err := resumed.FlushPending(); err != nil {
		t.Fatal(err)
	}
	a, evA := dump(t, whole)
	b, evB := dump(t, st)
	if !maps.Equal(a, b) {
		for k, v := range a {
			if b[k] != v {
				t.Fatalf("bucket/key %q: whole %x, resumed %x", k, v, b[k])
			}
		}
		t.Fatal("the resumed import left keys the whole one does not")
	}
	if !slices.Equal(evA, evB) {
		t.Fatalf("events differ: %d whole, %d resumed", len(evA), len(evB))
	}
}

// importSample is n tasks touching every status, sub-tasks, dependencies
// (some on later tasks of the input, so the import reorders), labels,
// assignees, estimates, progress and blocked reasons.
func importSample(n int) []importer.Task {
	statuses := tasks.Statuses
	out := make([]importer.Task, n)
	for i := range out {
		key := fmt.Sprintf("k%d", i)
		t := importer.Task{Key: key, Title: fmt.Sprintf("task %d of the import", i), Status: statuses[i%len(statuses)]}
		if i%3 == 0 {
			d := fmt.Sprintf("description %d", i)
			t.Description = &d
		}
		if i%4 == 1 {
			p := tasks.Priorities[i%4]
			t.Priority = &p
		}
		if i%5 == 2 {
			t.Labels = []string{"x", fmt.Sprintf("l%d", i%7)}
			a := fmt.Sprintf("agent-%d", i%3)
			t.Assignee = &a
			e := float64(i % 9)
			t.EstimateHours = &e
		}
		if t.Status == tasks.StatusBlocked {
			r := "waits on a vendor"
			t.BlockedReason = &r
		}
		if i%6 == 5 {
			pr := float64(i % 100)
			t.Progress = &pr
		}
		if i >= 10 && i%10 == 4 {
			t.Parent = fmt.Sprintf("k%d", i-7)
		}
		if i >= 20 && i%7 == 3 {
			t.DependsOn = []string{fmt.Sprintf("k%d", i-13), fmt.Sprintf("k%d", i-20)}
		}
		if i+3 < n && i%11 == 6 {
			t.DependsOn = append(t.DependsOn, fmt.Sprintf("k%d", i+3))
		}
		out[i] = t
	}
	return out
}

// dump reads every bucket that holds task state; the outbox is compared by
// its events' types and data in key order (its keys and ids are random).
func dump(t testing.TB, st *store.Store) (map[string]string, []string) {
	t.Helper()
	buckets := []string{store.BucketCounters, store.BucketProjectSeq, store.BucketTasks, store.BucketTasksByProject, store.BucketTasksByProjectStatus, store.BucketTasksByStatus, store.BucketTaskChildren, store.BucketChainLinks, store.BucketTaskDeps, store.BucketTaskDependents, store.BucketTaskClaims, store.BucketTaskTrigrams, store.BucketTaskSorted, store.BucketTaskCounts, store.BucketTaskReady, store.BucketTaskReadyOf, store.BucketTaskWaiting, store.BucketTaskFacets, store.BucketTaskSearchText, store.BucketTaskTrigramPending, store.BucketImportJournal}
	out := map[string]string{}
	var events []string
	err := st.View(func(tx kv.Tx) error {
		for _, b := range buckets {
			if err := tx.Bucket([]byte(b)).ForEach(func(k, v []byte) error {
				out[b+"\x00"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte(store.BucketEventOutbox)).ForEach(func(_, v []byte) error {
			var ev struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(v, &ev); err != nil {
				return err
			}
			events = append(events, ev.Type+" "+string(ev.Data))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, events
}

// An import leaves the store exactly as task_create and the task_update
// calls to each task's status, made one by one in the import's order,
// leave it: every task, index, counter, chain link and event.
func TestImportEqualsOneByOne(t *testing.T) {
	t.Parallel()
	const n = 1200 // two transactions to stage the plan, two to write the tasks
	sample := importSample(n)
	stA, svcA := wired(t)
	out, err := svcA.Import(tasks.Call{Actor: "op"}, "imp", sample)
	if err != nil {
		t.Fatal(err)
	}
	if out.Imported != n || out.Transactions != 4 {
		t.Fatalf("imported %d in %d transactions", out.Imported, out.Transactions)
	}
	// The same tasks one call at a time, in the order the import made
	// them (by the numbers it gave).
	order := slices.SortedFunc(maps.Keys(out.IDs), func(a, b string) int {
		x, _ := tasks.ParseTaskID(out.IDs[a])
		y, _ := tasks.ParseTaskID(out.IDs[b])
		return int(x) - int(y)
	})
	byKey := map[string]importer.Task{}
	for _, s := range sample {
		byKey[s.Key] = s
	}
	stB, svcB := wired(t)
	ids := map[string]string{}
	for _, key := range order {
		s := byKey[key]
		in := tasks.CreateInput{Title: s.Title, Description: s.Description, Project: "imp", Priority: s.Priority, Labels: s.Labels, Assignee: s.Assignee, EstimateHours: s.EstimateHours}
		if s.Parent != "" {
			p := ids[s.Parent]
			in.ParentID = &p
		}
		for _, d := range s.DependsOn {
			in.DependsOn = append(in.DependsOn, ids[d])
		}
		c, err := svcB.Create("op", in)
		if err != nil {
			t.Fatalf("create %s: %v", key, err)
		}
		ids[key] = c.TaskID
		steps := statusSteps(s.Status)
		for i, st := range steps {
			up := tasks.UpdateInput{TaskID: c.TaskID, Status: &st}
			if i == len(steps)-1 {
				up.BlockedReason = s.BlockedReason
				up.Progress = s.Progress
			}
			if _, err := svcB.Update("op", up); err != nil {
				t.Fatalf("update %s to %s: %v", key, st, err)
			}
		}
		if len(steps) == 0 && s.Progress != nil && *s.Progress != 0 {
			if _, err := svcB.Update("op", tasks.UpdateInput{TaskID: c.TaskID, Progress: s.Progress}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !maps.Equal(ids, out.IDs) {
		t.Fatal("one by one, the tasks got other ids")
	}
	for _, svc := range []*tasks.Service{svcA, svcB} {
		if err := svc.FlushPending(); err != nil {
			t.Fatal(err)
		}
	}
	a, evA := dump(t, stA)
	b, evB := dump(t, stB)
	for k, v := range b {
		if a[k] != v {
			t.Fatalf("bucket/key %q: import %x, one by one %x", k, a[k], v)
		}
	}
	if len(a) != len(b) {
		for k := range a {
			if _, ok := b[k]; !ok {
				t.Fatalf("the import left %q, which one by one does not", k)
			}
		}
	}
	if !slices.Equal(evA, evB) {
		t.Fatalf("events differ: %d imported, %d one by one", len(evA), len(evB))
	}
	problems, _, err := audit.New(stA, audit.Config{}).StoreProblems("imported")
	if err != nil || len(problems) > 0 {
		t.Fatalf("chains of the imported store: %v %v", problems, err)
	}
}

// statusSteps is the state machine's shortest walk from backlog.
func statusSteps(status string) []string {
	switch status {
	case tasks.StatusTodo:
		return []string{"todo"}
	case tasks.StatusInProgress:
		return []string{"todo", "in_progress"}
	case tasks.StatusBlocked:
		return []string{"todo", "blocked"}
	case tasks.StatusReview:
		return []string{"todo", "in_progress", "review"}
	case tasks.StatusDone:
		return []string{"todo", "in_progress", "review", "done"}
	case tasks.StatusCancelled:
		return []string{"cancelled"}
	}
	return nil
}
