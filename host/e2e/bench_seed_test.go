package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"

	"github.com/cairn-mcp/cairn/plugins/core"
	"github.com/cairn-mcp/cairn/plugins/core/store"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// Words of the seeded tasks. seedRare occurs in exactly one task;
// seedCommon in every tenth.
var seedWords = []string{"login", "cache", "parser", "store", "metrics", "refactor", "docs", "crash", "deploy", "schema", "index", "webhook"}

const (
	seedRare   = "zanzibar"
	seedCommon = "quokka"
)

// seedPaths walk a task from backlog to each other state.
var seedPaths = [][]string{
	{tasks.StatusTodo, tasks.StatusInProgress},
	{tasks.StatusTodo, tasks.StatusBlocked},
	{tasks.StatusTodo, tasks.StatusInProgress, tasks.StatusReview},
	{tasks.StatusTodo, tasks.StatusInProgress, tasks.StatusReview, tasks.StatusDone},
	{tasks.StatusCancelled},
}

// seedTasks writes n tasks in 10 projects (proj-0 … proj-9) into the core
// store of dataDir through the task service's own Go API, before cairn
// starts: mixed priorities and labels, about half moved to todo and a
// tenth of the rest spread over the other states. Many writers at once
// share group commits, so seeding takes far fewer than n fsyncs.
func seedTasks(dataDir string, n int) error {
	st, err := store.Open(filepath.Join(dataDir, core.StoreFile), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	svc := tasks.New(st, tasks.Config{})
	for p := 0; p < 10; p++ {
		if _, err := svc.AddProject(fmt.Sprintf("proj-%d", p)); err != nil {
			return err
		}
	}
	const writers = 64
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for wr := 0; wr < writers; wr++ {
		wg.Add(1)
		go func(wr int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(wr), 7))
			word := func() string { return seedWords[rng.IntN(len(seedWords))] }
			for i := wr; i < n; i += writers {
				title := fmt.Sprintf("%s %s task %d", word(), word(), i)
				if i == n/2 {
					title += " " + seedRare
				}
				desc := fmt.Sprintf("Details about %s and %s.", word(), word())
				if i%10 == 0 {
					desc += " " + seedCommon
				}
				prio := tasks.Priorities[rng.IntN(len(tasks.Priorities))]
				out, err := svc.Create("seed", tasks.CreateInput{
					Title: title, Description: &desc, Project: fmt.Sprintf("proj-%d", i%10),
					Priority: &prio, Labels: []string{word()},
				})
				if err != nil {
					errc <- err
					return
				}
				var path []string
				switch r := rng.IntN(20); {
				case r < 10:
					path = []string{tasks.StatusTodo}
				case r < 12:
					path = seedPaths[rng.IntN(len(seedPaths))]
				}
				for _, status := range path {
					in := tasks.UpdateInput{TaskID: out.TaskID, Status: &status}
					if status == tasks.StatusBlocked {
						reason := "waiting on " + word()
						in.BlockedReason = &reason
					}
					if _, err := svc.Update("seed", in); err != nil {
						errc <- fmt.Errorf("seed %s -> %s: %w", out.TaskID, status, err)
						return
					}
				}
			}
		}(wr)
	}
	wg.Wait()
	close(errc)
	return <-errc
}
