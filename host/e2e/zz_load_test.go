package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"
)

func TestZZLoad(t *testing.T) {
	w := newWorkspace(t)
	w.env = append(w.env, "CAIRN_LOG_LEVEL=warn", "CAIRN_PROJECT=proj-0")
	s := w.serve()
	created := s.call("task_create", map[string]any{"title": "benchmark task", "project": "proj-0"})
	id := structured(t, created)["task_id"].(string)
	pid := s.cmd.Process.Pid
	os.WriteFile("/tmp/hop/load.pids", []byte(fmt.Sprint(pid)), 0o644)
	tool := os.Getenv("ZZ_TOOL")
	start := time.Now()
	n := 0
	for time.Since(start) < 12*time.Second {
		if tool == "ping" {
			s.call("server_ping", map[string]any{})
		} else {
			s.call("task_get", map[string]any{"task_id": id})
		}
		n++
	}
	t.Logf("%d calls, %v each", n, 12*time.Second/time.Duration(n))
}
