package tasks

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/core/store"
	bolt "go.etcd.io/bbolt"
)

const benchTasks = 100_000

var (
	benchOnce sync.Once
	benchSvc  *Service
	benchDir  string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchSvc != nil {
		_ = benchSvc.Store().Close()
	}
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var benchWords = []string{"login", "cache", "parser", "store", "metrics", "refactor", "docs", "crash", "deploy", "schema", "index", "webhook"}

// benchService builds, once per test binary, a store of 100,000 tasks in 10
// projects with mixed statuses, priorities, labels and sub-tasks. It writes
// through the same createTx/putRecord code as the service, 10,000 tasks per
// transaction, so building takes seconds rather than 100,000 fsyncs.
func benchService(b *testing.B) *Service {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "cairn-bench-")
		if benchErr != nil {
			return
		}
		var st *store.Store
		st, benchErr = store.Open(filepath.Join(benchDir, "core.db"), store.Options{})
		if benchErr != nil {
			return
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		svc := New(st, Config{Clock: func() time.Time { return t0 }})
		for p := 0; p < 10; p++ {
			if _, benchErr = svc.AddProject(fmt.Sprintf("proj-%d", p)); benchErr != nil {
				return
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		start := time.Now()
		const batch = 10_000
		for lo := 0; lo < benchTasks; lo += batch {
			benchErr = st.Update(func(tx *bolt.Tx) error {
				for i := lo; i < lo+batch; i++ {
					in := CreateInput{
						Title:       fmt.Sprintf("%s %s task %d", benchWords[rng.IntN(len(benchWords))], benchWords[rng.IntN(len(benchWords))], i),
						Description: ptr(fmt.Sprintf("Details about %s and %s.", benchWords[rng.IntN(len(benchWords))], benchWords[rng.IntN(len(benchWords))])),
						Project:     fmt.Sprintf("proj-%d", i%10),
						Priority:    ptr(Priorities[rng.IntN(4)]),
						Labels:      []string{benchWords[rng.IntN(len(benchWords))]},
					}
					var parent uint64
					if i >= 10 && i%5 == 0 {
						parent = uint64(i - 10 + 1) // same project: i-10 ≡ i (mod 10)
						in.ParentID = ptr(FormatTaskID(parent))
					}
					now := t0.Add(time.Duration(i) * time.Millisecond)
					rec, err := svc.createTx(tx, "bench", &in, parent, now)
					if err != nil {
						return err
					}
					next := *rec
					next.status = uint8(1 + rng.IntN(len(Statuses)))
					next.progress = float64(rng.IntN(101))
					next.updatedMs = now.Add(time.Duration(rng.IntN(3_600_000)) * time.Millisecond).UnixMilli()
					if statusName(next.status) == StatusBlocked {
						next.blockedReason = "waiting on " + benchWords[rng.IntN(len(benchWords))]
					}
					if err := putRecord(tx, &next, rec); err != nil {
						return err
					}
				}
				return nil
			})
			if benchErr != nil {
				return
			}
		}
		benchSvc = svc
		fmt.Fprintf(os.Stderr, "bench fixture: %d tasks built in %v\n", benchTasks, time.Since(start).Round(time.Millisecond))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchSvc
}

func BenchmarkList100k(b *testing.B) {
	svc := benchService(b)
	cases := []struct {
		name string
		in   ListInput
	}{
		{"all_updated_desc", ListInput{}},
		{"all_priority_offset_1000", ListInput{SortBy: ptr(SortPriority), Offset: ptr(1000), Limit: ptr(100)}},
		{"project", ListInput{Project: ptr("proj-3")}},
		{"project_status", ListInput{Project: ptr("proj-3"), Status: []string{StatusTodo, StatusInProgress}}},
		{"status_label_priority", ListInput{Status: []string{StatusReview}, Label: ptr("cache"), Priority: []string{PriorityHigh}}},
		{"search_all", ListInput{Search: ptr("login parser")}},
		{"limit_500", ListInput{Limit: ptr(500), SortBy: ptr(SortCreated), SortOrder: ptr(OrderAsc)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var total int
			for b.Loop() {
				out, err := svc.List(c.in)
				if err != nil {
					b.Fatal(err)
				}
				total = out.TotalCount
			}
			b.ReportMetric(float64(total), "matches")
		})
	}
}

func BenchmarkNextActions100k(b *testing.B) {
	svc := benchService(b)
	for _, blocked := range []bool{false, true} {
		b.Run(fmt.Sprintf("include_blocked=%v", blocked), func(b *testing.B) {
			var count int
			for b.Loop() {
				out, err := svc.NextActions(NextInput{Project: "proj-7", IncludeBlocked: ptr(blocked)})
				if err != nil {
					b.Fatal(err)
				}
				count = out.Count
			}
			b.ReportMetric(float64(count), "actions")
		})
	}
}

// BenchmarkCreate measures one durable task_create (one fsync'd commit).
func BenchmarkCreate(b *testing.B) {
	f := newFixture(b, "alpha")
	for b.Loop() {
		if _, err := f.svc.Create("bench", CreateInput{Title: "bench task", Project: "alpha"}); err != nil {
			b.Fatal(err)
		}
	}
}
