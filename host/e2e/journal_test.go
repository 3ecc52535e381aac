package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestJournalKilledCorePluginLosesNoCommit kills the core plugin with
// SIGKILL after twenty acknowledged task_create calls, which are then in
// the store's journal and not yet in core.db (docs/decisions.md D47): the
// restarted plugin finds every one of them, and numbers the next task after
// them, not over them.
func TestJournalKilledCorePluginLosesNoCommit(t *testing.T) {
	w := newWorkspace(t)
	s := w.serve("CAIRN_PROJECT=web")
	var ids []string
	for i := range 20 {
		res := s.call("task_create", map[string]any{"title": fmt.Sprintf("journaled %d", i), "project": "web"})
		if res.IsError {
			t.Fatalf("task_create %d: %v", i, structured(t, res))
		}
		ids = append(ids, structured(t, res)["task_id"].(string))
	}
	if _, err := os.Stat(filepath.Join(w.dataDir(), "core.db-journal-0")); err != nil {
		t.Fatalf("no journal beside core.db: %v", err)
	}
	pid, _ := pluginHealth(t, s, "core")["pid"].(float64)
	if pid == 0 {
		t.Fatal("no pid for the core plugin")
	}
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		res := s.call("task_get", map[string]any{"task_id": id})
		if res.IsError {
			t.Fatalf("acknowledged task %s lost with the killed plugin: %v", id, structured(t, res))
		}
	}
	if np, _ := pluginHealth(t, s, "core")["pid"].(float64); np == pid {
		t.Fatalf("the core plugin was not restarted (pid %v)", pid)
	}
	res := s.call("task_create", map[string]any{"title": "after the kill", "project": "web"})
	if res.IsError {
		t.Fatalf("task_create after the kill: %v", structured(t, res))
	}
	next := structured(t, res)["task_id"].(string)
	for _, id := range ids {
		if id == next {
			t.Fatalf("the task created after the kill took %s, a number handed out before it", next)
		}
	}
	list := structured(t, s.call("task_list", map[string]any{"project": "web", "limit": 100}))
	if n, _ := list["total_count"].(float64); int(n) != len(ids)+1 {
		t.Fatalf("task_list counts %v tasks, want %d", list["total_count"], len(ids)+1)
	}
}
