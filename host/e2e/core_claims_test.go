package e2e

import (
	"fmt"
	"sync"
	"testing"
)

// Claims through the shared daemon (D27): 16 agents, each its own `cairn
// serve` relaying to one daemon, race task_next_actions {claim: true} over
// 200 ready tasks. Every task is claimed exactly once and every agent holds
// exactly the tasks it was told it got.
func TestClaimRaceThroughSharedDaemon(t *testing.T) {
	const agents, tasks = 16, 200
	w := newWorkspace(t)
	all := startSessions(t, w, agents, func(i int) []string {
		return append(daemonEnv, fmt.Sprintf("CAIRN_AGENT_ID=claimer-%d", i))
	})
	for i := 0; i < tasks; i++ {
		out, err := callOK(all[0], "task_create", map[string]any{"title": fmt.Sprintf("ready %d", i), "project": "web"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := callOK(all[0], "task_update", map[string]any{"task_id": out["task_id"], "status": "todo"}); err != nil {
			t.Fatal(err)
		}
	}
	claimed := map[string]string{} // task id → agent told it holds it
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i, s := range all {
		wg.Add(1)
		go func(agent string, s *session) {
			defer wg.Done()
			for {
				out, err := callOK(s, "task_next_actions", map[string]any{"project": "web", "claim": true})
				if err != nil {
					fail(err)
					return
				}
				id, _ := out["claimed"].(string)
				if id == "" {
					return
				}
				mu.Lock()
				if prev, dup := claimed[id]; dup {
					errs = append(errs, fmt.Errorf("%s told to both %s and %s", id, prev, agent))
				}
				claimed[id] = agent
				mu.Unlock()
			}
		}(fmt.Sprintf("claimer-%d", i), s)
	}
	wg.Wait()
	for _, err := range errs {
		t.Fatal(err)
	}
	if len(claimed) != tasks {
		t.Fatalf("%d tasks claimed, want %d", len(claimed), tasks)
	}
	perAgent := map[string]int{}
	for id, agent := range claimed {
		got, err := callOK(all[0], "task_get", map[string]any{"task_id": id})
		if err != nil {
			t.Fatal(err)
		}
		if got["claimed_by"] != agent || got["assignee"] != agent || got["status"] != "in_progress" {
			t.Fatalf("%s: claimed_by %v assignee %v status %v, but %s was told it holds it", id, got["claimed_by"], got["assignee"], got["status"], agent)
		}
		perAgent[agent]++
	}
	// Nothing is left to claim, for anyone.
	if out, err := callOK(all[1], "task_next_actions", map[string]any{"project": "web", "claim": true}); err != nil || out["claimed"] != nil {
		t.Fatalf("after the race: %v %v", out, err)
	}
	t.Logf("claims per agent: %v", perAgent)
}
