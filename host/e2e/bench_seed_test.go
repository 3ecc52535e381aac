package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/plugins/core"
	"github.com/cairn-mcp/cairn/plugins/core/audit"
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
// store of dataDir through the task service's own Go API, with their event
// chains and idempotency records, before cairn starts: mixed priorities and labels, about half moved to todo and a
// tenth of the rest spread over the other states. Many writers at once
// share group commits, so seeding takes far fewer than n fsyncs.
func seedTasks(dataDir string, n int) error {
	st, err := store.Open(filepath.Join(dataDir, core.StoreFile), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	// Every write appends to its task's event chain and records its
	// idempotency key, as a write through cairn does, so the trees a
	// benchmark's writes touch are as deep as in a store used for real.
	aud := audit.New(st, audit.Config{})
	svc := tasks.New(st, tasks.Config{OnChange: aud.AppendTaskChange, ThoughtTrail: aud.ThoughtTrail})
	// Writes the search postings the writers below leave pending.
	defer svc.Close()
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
				out, err := svc.CreateFor(tasks.Call{Actor: "seed", Idem: idempotency.Key{Key: fmt.Sprintf("seed-create-%d", i)}}, tasks.CreateInput{
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
					if _, err := svc.UpdateFor(tasks.Call{Actor: "seed", Idem: idempotency.Key{Key: fmt.Sprintf("seed-%s-%s", out.TaskID, status)}}, in); err != nil {
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

// seedCached puts a store of n seeded tasks into dataDir, copying it from a
// cache in the temp dir when the task and store code it was written by is
// unchanged (seeding 100,000 tasks takes minutes; a copy, a second).
func seedCached(dataDir string, n int) (cached bool, err error) {
	key, err := seedKey()
	if err != nil {
		return false, err
	}
	dir := filepath.Join(os.TempDir(), "cairn-bench-seed")
	cache := filepath.Join(dir, fmt.Sprintf("%d-%s.db", n, key))
	if _, err := os.Stat(cache); err != nil {
		tmp, err := os.MkdirTemp("", "cairn-bench-seeding-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(tmp)
		if err := seedTasks(tmp, n); err != nil {
			return false, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, err
		}
		if err := os.Rename(filepath.Join(tmp, core.StoreFile), cache); err != nil {
			return false, err
		}
	} else {
		cached = true
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return cached, err
	}
	return cached, copyFile(cache, filepath.Join(dataDir, core.StoreFile))
}

// seedKey hashes the Go sources of the core store and task packages and of
// this seeding code: a change to any of them seeds afresh.
func seedKey() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the benchmark's source")
	}
	repo := filepath.Join(filepath.Dir(self), "..", "..")
	h := sha256.New()
	for _, pattern := range []string{"plugins/core/store/*.go", "plugins/core/tasks/*.go", "plugins/core/audit/*.go", "host/e2e/bench_seed_test.go"} {
		files, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil {
			return "", err
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") && !strings.HasSuffix(f, "bench_seed_test.go") {
				continue
			}
			raw, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f), len(raw))
			h.Write(raw)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
