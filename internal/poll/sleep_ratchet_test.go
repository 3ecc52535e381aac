package poll

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sleepAllowance lists every test file of the repository that still calls
// time's Sleep, with how many times. What remains is the behaviour under
// test (a real process's idle timeout, a crash at a random moment, a slow
// fake model), a window in which something must not happen, or a
// benchmark; anything else waits with Until or advances an injected clock.
// The numbers only go down: a file that sleeps less lowers its entry, a
// file that is moved takes its entry along.
var sleepAllowance = map[string]int{
	"host/e2e/bench_floor_test.go":                      1,
	"host/e2e/bench_hop_test.go":                        2,
	"host/e2e/bench_memory_test.go":                     1,
	"host/e2e/cluster_test.go":                          3,
	"host/e2e/cluster_writes_test.go":                   5,
	"host/e2e/exactly_once_test.go":                     3,
	"host/e2e/http_idempotency_test.go":                 3,
	"host/e2e/http_sessions_test.go":                    1,
	"host/e2e/import_test.go":                           1,
	"host/e2e/sdd_durable_events_test.go":               1,
	"host/e2e/sessions_test.go":                         3,
	"host/e2e/supervisor_crashloop_test.go":             1,
	"host/e2e/tasks_test.go":                            5,
	"host/e2e/tracing_test.go":                          1,
	"host/e2e/ui_dashboard_test.go":                     1,
	"host/e2e/ui_keepalive_test.go":                     2,
	"host/events/cluster_test.go":                       3,
	"host/supervisor/events_test.go":                    1,
	"host/supervisor/main_test.go":                      1,
	"host/transport/httpserve/cluster_sessions_test.go": 2,
	"host/ui/server_test.go":                            2,
	"internal/kv/pgstall_test.go":                       1,
	"plugins/admin/store/vanished_test.go":              1,
	"plugins/admin/webhooks/cluster_test.go":            2,
	"plugins/admin/webhooks/webhooks_test.go":           2,
	"plugins/core/outbox/bench_test.go":                 1,
	"plugins/core/outbox/drainer_test.go":               1,
	"plugins/sdd/engine/outbox_test.go":                 1,
	"plugins/sdd/engine/persist_test.go":                1,
	"sdk/internal/lane/frame_writer_test.go":            1,
	"sdk/internal/lane/lane_test.go":                    1,
	"sdk/mcp_task_test.go":                              1,
	"sdk/workers/workers_test.go":                       1,
}

// The count of sleeps in tests never grows (see sleepAllowance).
func TestSleepsInTestsDoNotGrow(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	sleep := "time." + "Sleep(" // split, so that this file does not count itself
	got := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(data), sleep); n > 0 {
			rel, _ := filepath.Rel(root, path)
			got[filepath.ToSlash(rel)] = n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for f := range got {
		files[f] = true
	}
	for f := range sleepAllowance {
		files[f] = true
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	total := 0
	for _, f := range names {
		n, allowed := got[f], sleepAllowance[f]
		total += n
		switch {
		case n > allowed:
			t.Errorf("%s sleeps %d times, %d allowed: wait for the condition with poll.Until, or give the code under test a clock the test advances", f, n, allowed)
		case n < allowed:
			t.Errorf("%s sleeps %d times, fewer than the %d allowed: lower its entry in sleepAllowance", f, n, allowed)
		}
	}
	t.Logf("%d sleeps in %d test files", total, len(got))
}
