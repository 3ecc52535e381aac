package ui

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// listedTask is one row of task_list, as the graph and the burn-up read it.
type listedTask struct {
	ID        string `json:"task_id"`
	Title     string `json:"title"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// listPage is the most task_list returns at once.
const listPage = 500

// projectOf is the project a picture shows: the address's, else the
// login's.
func projectOf(r *http.Request, g Grant) string {
	if p := strings.TrimSpace(r.URL.Query().Get("project")); p != "" {
		return p
	}
	return g.Project
}

// projectTasks reads up to limit tasks of a project through task_list, page
// by page, oldest first; total is how many the project has.
func (s *Server) projectTasks(ctx context.Context, g Grant, project string, limit int) (tasks []listedTask, total int, e *errs.Error) {
	for offset := 0; offset < limit; offset += listPage {
		var out struct {
			Tasks      []listedTask `json:"tasks"`
			TotalCount int          `json:"total_count"`
		}
		args := map[string]any{"project": project, "limit": min(listPage, limit-offset), "offset": offset, "sort_by": "created", "sort_order": "asc"}
		if e := s.call(ctx, g, "task_list", args, &out); e != nil {
			return nil, 0, e
		}
		tasks = append(tasks, out.Tasks...)
		total = out.TotalCount
		if len(out.Tasks) == 0 || len(tasks) >= total {
			break
		}
	}
	return tasks, total, nil
}

// dependencies reads each task's depends_on through task_get, a few calls
// at once (task_list's rows do not carry them). A task that vanished
// meanwhile keeps no dependencies.
func (s *Server) dependencies(ctx context.Context, g Grant, tasks []listedTask) map[string][]string {
	deps := make(map[string][]string, len(tasks))
	var mu sync.Mutex
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(cardFetchers, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range jobs {
				var t struct {
					DependsOn []string `json:"depends_on"`
				}
				if s.call(ctx, g, "task_get", map[string]any{"task_id": id}, &t) != nil {
					continue
				}
				mu.Lock()
				deps[id] = t.DependsOn
				mu.Unlock()
			}
		}()
	}
	for _, t := range tasks {
		jobs <- t.ID
	}
	close(jobs)
	wg.Wait()
	return deps
}
