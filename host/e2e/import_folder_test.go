package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// `cairn import` of a Backlog.md folder holding a FIFO named like a task
// file, through the shared daemon: it used to block the daemon's core area
// until someone opened the FIFO for writing (the daemon then ignored
// SIGTERM and every new session failed). The FIFO is refused at once,
// naming it, nothing is imported, and the daemon goes on serving: a
// session's calls answer and the folder imports once the FIFO is gone
// (docs/decisions.md D41).
func TestImportFIFOThroughDaemon(t *testing.T) {
	w := newWorkspace(t)
	s, err := startSession(w, daemonEnv...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	w.writeFile("backlog/tasks/task-1 - a.md", "---\nid: task-1\ntitle: first\n---\n", 0o644)
	fifo := filepath.Join(w.root, "backlog", "tasks", "task-2 - b.md")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	t.Cleanup(func() {
		// Should a reader still wait on it, a writer lets it go.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
	// runCairn gives up, and fails the test, after a minute.
	code, _, errOut := runCairn(t, w, "", daemonEnv, "import", filepath.Join(w.root, "backlog"))
	if code == 0 || !strings.Contains(errOut, "ERR_INVALID_INPUT") || !strings.Contains(errOut, fifo) || !strings.Contains(errOut, "FIFO") {
		t.Fatalf("import of a folder with a FIFO: exit %d\n%s", code, errOut)
	}
	if tasks, _ := structured(t, s.call("task_list", map[string]any{}))["tasks"].([]any); len(tasks) != 0 {
		t.Fatalf("the refused import left %d tasks", len(tasks))
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCairn(t, w, "", daemonEnv, "import", filepath.Join(w.root, "backlog")); code != 0 || !strings.Contains(out, "imported 1 tasks") {
		t.Fatalf("import once the FIFO is gone: exit %d\n%s%s", code, out, errOut)
	}
	if tasks, _ := structured(t, s.call("task_list", map[string]any{}))["tasks"].([]any); len(tasks) != 1 {
		t.Fatalf("the session sees %d tasks after the import, want 1", len(tasks))
	}
}
