package storecopy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/kv"
	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// seed fills a bbolt store in dir through the domain API: nTasks tasks in
// four projects, nThoughts thoughts spread over them, and sessions audit
// sessions finalized over a task and its sub-tasks each.
func seed(t *testing.T, dir string, nTasks, nThoughts, sessions int) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Seeding only: without an fsync per commit the fixture takes seconds,
	// not minutes. The copy itself reads a file closed cleanly.
	st.DB().NoSync = true
	aud := audit.New(st, audit.Config{})
	svc := tasks.New(st, tasks.Config{OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail})
	projects := []string{"alpha", "beta", "gamma", "delta"}
	for _, p := range projects {
		if _, err := svc.AddProject(p); err != nil {
			t.Fatal(err)
		}
	}
	const workers = 8
	var wg sync.WaitGroup
	ids := make([]string, nTasks)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < nTasks; i += workers {
				in := tasks.CreateInput{Title: fmt.Sprint("task ", i), Project: projects[i%len(projects)]}
				out, err := svc.Create("seeder", in)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = out.TaskID
			}
		}(w)
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < nThoughts; i += workers {
				if _, err := aud.Record("thinker", audit.RecordInput{TaskID: ids[(i*7)%nTasks], Type: "decision", Content: fmt.Sprint("thought ", i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	for i := 0; i < sessions; i++ {
		s, err := aud.StartSession(audit.StartInput{TaskID: ids[i*3], AuditorID: "auditor"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aud.Finalize(audit.FinalizeInput{SessionID: s.SessionID}); err != nil {
			t.Fatal(err)
		}
	}
}

// The copy: 10,000 tasks and 100,000 thoughts move into
// PostgreSQL with every pair, chain and root intact (a tenth of that with
// -short).
func TestCopyVerifiesEveryChainAndRoot(t *testing.T) {
	t.Parallel()
	nTasks, nThoughts := 10_000, 100_000
	if testing.Short() {
		nTasks, nThoughts = 1_000, 10_000
	}
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	start := time.Now()
	seed(t, dir, nTasks, nThoughts, 5)
	t.Logf("seeded %d tasks and %d thoughts in %s", nTasks, nThoughts, time.Since(start))
	start = time.Now()
	rep, err := Copy(context.Background(), dir, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copied and verified in %s: %+v", time.Since(start), rep)
	// Every task has one event link (its creation) besides its thoughts.
	if rep.Tasks != nTasks || rep.ChainLinks != nTasks+nThoughts || rep.Sessions != 5 || rep.RootsVerified != 5 {
		t.Fatalf("report %+v, want %d tasks, %d links, 5 sessions and roots", rep, nTasks, nTasks+nThoughts)
	}

	// The target serves the same tasks and answers the same roots.
	src, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := store.OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var pairs [2]int
	for i, st := range []*store.Store{src, dst} {
		svc := tasks.New(st, tasks.Config{})
		got, err := svc.Get(tasks.GetInput{TaskID: fmt.Sprint("T-", nTasks)})
		if err != nil || got.Title == "" {
			t.Fatalf("store %d: last task %+v %v", i, got, err)
		}
		roots, err := audit.New(st, audit.Config{}).FinalizedRoots()
		if err != nil || len(roots) != 5 {
			t.Fatalf("store %d: roots %v %v", i, roots, err)
		}
		pairs[i] = countPairs(t, st)
	}
	if pairs[0] != pairs[1] {
		t.Fatalf("pairs: %d in bbolt, %d in PostgreSQL", pairs[0], pairs[1])
	}
}

// countPairs counts the pairs of the buckets both backends hold.
func countPairs(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	if err := st.View(func(tx kv.Tx) error {
		for _, b := range []string{store.BucketTasks, store.BucketChainLinks, store.BucketAuditSessions, store.BucketAuditFrozen, store.BucketTaskTrigrams, store.BucketTaskSorted} {
			n += tx.Bucket([]byte(b)).Count()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// A database that already holds core data is refused, naming "to", and a
// data dir a running server holds is refused, saying to stop it.
func TestCopyRefusesNonEmptyTargetAndLockedSource(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	seed(t, dir, 3, 3, 0)
	if _, err := Copy(context.Background(), dir, dsn); err != nil {
		t.Fatal(err)
	}
	_, err := Copy(context.Background(), dir, dsn)
	if e, ok := errs.As(err); !ok || e.Code != errs.InvalidInput || e.Details["field"] != "to" {
		t.Fatalf("copy into a used database: %v", err)
	}
	running, err := store.Open(filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	_, err = Copy(context.Background(), dir, pgtest.DSN(t))
	if e, ok := errs.As(err); !ok || e.Code != errs.Conflict || e.Details["field"] != "from" {
		t.Fatalf("copy of a held store: %v", err)
	}
}
