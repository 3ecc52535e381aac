package ui

import (
	"context"
	"sync"
)

// cardFetchers bounds the task_get calls one column page makes at once.
const cardFetchers = 8

// enrichCards adds what a card shows beyond task_list's row: labels, the
// blocked reason, and the sub-task and dependency counts, from task_get
// (which the board may call for at most one page of tasks per request). A
// task that vanished meanwhile keeps its row as listed.
func (s *Server) enrichCards(ctx context.Context, g Grant, cards []map[string]any) {
	jobs := make(chan map[string]any)
	var wg sync.WaitGroup
	for range min(cardFetchers, len(cards)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				var t struct {
					Labels        []string `json:"labels"`
					BlockedReason string   `json:"blocked_reason"`
					Dependents    []string `json:"dependents"`
					DependsOn     []string `json:"depends_on"`
					DependedOnBy  []string `json:"depended_on_by"`
				}
				if s.call(ctx, g, "task_get", map[string]any{"task_id": c["task_id"], "include_dependents": true}, &t) != nil {
					continue
				}
				if t.Labels == nil {
					t.Labels = []string{}
				}
				c["labels"] = t.Labels
				c["subtask_count"] = len(t.Dependents)
				c["depends_on_count"] = len(t.DependsOn)
				c["depended_on_by_count"] = len(t.DependedOnBy)
				if t.BlockedReason != "" {
					c["blocked_reason"] = t.BlockedReason
				}
			}
		}()
	}
	for _, c := range cards {
		jobs <- c
	}
	close(jobs)
	wg.Wait()
}
