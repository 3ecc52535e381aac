package audit

import (
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"sync"
	"testing"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// server is one cairn server's core area: its own store handle (its own
// connection pool and group commit) on the shared database.
type server struct {
	tasks *tasks.Service
	audit *Service
}

func openServer(t testing.TB, dsn string) server {
	t.Helper()
	st, err := store.OpenPostgres(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	aud := New(st, Config{})
	return server{tasks: tasks.New(st, tasks.Config{OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail}), audit: aud}
}

// Two servers on one database, each with four writers creating tasks and
// appending thoughts to the same shared tasks at once: no task id, project
// sequence or thought id repeats, each shared chain's positions are exactly
// 1..n, and every chain of every task verifies. On bbolt two processes
// cannot open one file at all, so this is PostgreSQL's test.
func TestTwoServersShareIDsAndChains(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	servers := []server{openServer(t, dsn), openServer(t, dsn)}
	if _, err := servers[0].tasks.AddProject("demo"); err != nil {
		t.Fatal(err)
	}
	var shared []string
	for i := 0; i < 3; i++ {
		out, err := servers[i%2].tasks.Create("lead", tasks.CreateInput{Title: "shared", Project: "demo"})
		if err != nil {
			t.Fatal(err)
		}
		shared = append(shared, out.TaskID)
	}
	const writers, each = 4, 15
	var (
		mu        sync.Mutex
		taskIDs   = map[string]bool{}
		seqs      = map[uint64]bool{}
		thoughts  = map[string]bool{}
		positions = map[string]map[int]bool{}
		wg        sync.WaitGroup
	)
	for si, srv := range servers {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(srv server, who string) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					c, err := srv.tasks.Create(who, tasks.CreateInput{Title: fmt.Sprint(who, " ", i), Project: "demo"})
					if err != nil {
						t.Error(err)
						return
					}
					on := shared[i%len(shared)]
					r, err := srv.audit.Record(who, RecordInput{TaskID: on, Type: "reflection", Content: fmt.Sprint(who, " ", i)})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if taskIDs[c.TaskID] || seqs[c.Sequence] || thoughts[r.ThoughtID] || positions[on][r.ChainPosition] {
						t.Errorf("repeated: task %s seq %d thought %s position %d on %s", c.TaskID, c.Sequence, r.ThoughtID, r.ChainPosition, on)
					}
					taskIDs[c.TaskID], seqs[c.Sequence], thoughts[r.ThoughtID] = true, true, true
					if positions[on] == nil {
						positions[on] = map[int]bool{}
					}
					positions[on][r.ChainPosition] = true
					mu.Unlock()
				}
			}(srv, fmt.Sprintf("s%d-w%d", si, w))
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if n := len(taskIDs); n != 2*writers*each {
		t.Fatalf("%d distinct tasks, want %d", n, 2*writers*each)
	}
	for _, id := range shared {
		for p := 1; p <= len(positions[id]); p++ {
			if !positions[id][p] {
				t.Fatalf("chain of %s lacks position %d of %d", id, p, len(positions[id]))
			}
		}
	}
	for id := range taskIDs {
		shared = append(shared, id)
	}
	for i, id := range shared {
		r, err := servers[i%2].audit.Verify(VerifyInput{TaskID: &id})
		if err != nil || !r.ChainValid || r.IntegrityScore != 100 {
			t.Fatalf("verify %s on server %d: %+v %v", id, i%2, r, err)
		}
	}
}

// Three servers writing beside each other (docs/decisions.md D40): eight
// writers each create tasks under idempotency keys (each key sent twice,
// the second time to another server, as a client retrying through a new
// server would) with labels, and record thoughts on a few shared tasks.
// The writes must run as shared updates, conflict and run again where they
// meet, and still: no number repeats, every retry replays its first answer,
// task_list's counts (kept in per-server shards) equal what is stored on
// every server, and every chain verifies.
func TestThreeServersWriteBesideEachOther(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	servers := []server{openServer(t, dsn), openServer(t, dsn), openServer(t, dsn)}
	if _, err := servers[0].tasks.AddProject("demo"); err != nil {
		t.Fatal(err)
	}
	var shared []string
	for i := 0; i < 2; i++ {
		out, err := servers[i].tasks.Create("lead", tasks.CreateInput{Title: "shared", Project: "demo"})
		if err != nil {
			t.Fatal(err)
		}
		shared = append(shared, out.TaskID)
	}
	const writers, each = 8, 12
	var (
		mu    sync.Mutex
		ids   = map[string]string{} // task id → its idempotency key
		seqs  = map[uint64]bool{}
		wg    sync.WaitGroup
		label = []string{"red", "blue", "green"}
	)
	for si := range servers {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(si int, who string) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					key := fmt.Sprint(who, "/", i)
					in := tasks.CreateInput{Title: fmt.Sprint(who, " ", i), Project: "demo", Labels: []string{label[i%3]}}
					c, err := servers[si].tasks.CreateFor(tasks.Call{Actor: who, Idem: idempotency.Key{Key: key}}, in)
					if err != nil {
						t.Error(err)
						return
					}
					again, err := servers[(si+1)%3].tasks.CreateFor(tasks.Call{Actor: who, Idem: idempotency.Key{Key: key}}, in)
					if err != nil || again != c {
						t.Errorf("retry of %s through another server: %+v, %v; first answer %+v", key, again, err, c)
						return
					}
					if _, err := servers[si].audit.RecordOnce(who, idempotency.Key{Key: key + "/thought"}, "", RecordInput{TaskID: shared[i%2], Type: "reflection", Content: key}); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if _, dup := ids[c.TaskID]; dup || seqs[c.Sequence] {
						t.Errorf("repeated: task %s or sequence %d", c.TaskID, c.Sequence)
					}
					ids[c.TaskID], seqs[c.Sequence] = key, true
					mu.Unlock()
				}
			}(si, fmt.Sprintf("s%d-w%d", si, w))
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var sharedRuns, conflicts, alone uint64
	for _, srv := range servers {
		st := srv.tasks.Store().SharedStats()
		sharedRuns, conflicts, alone = sharedRuns+st.Committed, conflicts+st.Conflicts, alone+st.Alone
	}
	t.Logf("%d shared commits, %d conflicts run again, %d ran again alone", sharedRuns, conflicts, alone)
	if sharedRuns == 0 {
		t.Fatal("no write ran as a shared update")
	}
	want := 2 + len(servers)*writers*each
	if len(ids)+2 != want {
		t.Fatalf("%d distinct tasks, want %d", len(ids)+2, want)
	}
	demo := "demo"
	for si, srv := range servers {
		all, err := srv.tasks.List(tasks.ListInput{Project: &demo})
		if err != nil || all.TotalCount != want {
			t.Fatalf("server %d counts %d tasks (%v), want %d", si, all.TotalCount, err, want)
		}
		for i, l := range label {
			out, err := srv.tasks.List(tasks.ListInput{Label: &l})
			if n := len(servers) * writers * each / 3; err != nil || out.TotalCount != n {
				t.Fatalf("server %d counts %d tasks labelled %s (%v), want %d", si, out.TotalCount, l, err, n)
			}
			_ = i
		}
	}
	for i, id := range shared {
		r, err := servers[i].audit.Verify(VerifyInput{TaskID: &id})
		if err != nil || !r.ChainValid || r.IntegrityScore != 100 {
			t.Fatalf("verify %s: %+v %v", id, r, err)
		}
	}
}
