package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func cpuOf(pid int) (time.Duration, string) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, ""
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	comm := s[strings.IndexByte(s, '(')+1 : i]
	f := strings.Fields(s[i+1:])
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond, comm
}

func descendants(pid int) []int {
	out := []int{}
	for _, c := range childrenOf(pid) {
		out = append(out, c)
		out = append(out, descendants(c)...)
	}
	return out
}

func TestScratchCPUPerCall(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	b := &testing.B{}
	_ = b
	floor, err := startFloor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer floor.close()
	modes := [][]string{nil, relayEnv}
	if os.Getenv("SCRATCH") == "nodaemon" {
		modes = modes[:1]
	}
	for _, env := range modes {
		root := t.TempDir()
		_ = os.MkdirAll(filepath.Join(root, ".cairn", "plugins"), 0o755)
		w := &workspace{t: t, root: root, env: []string{
			"CAIRN_ROOT=" + root, "CAIRN_LOG_LEVEL=warn", "CAIRN_DAEMON=off", "CAIRN_TRUST_FILE=" + trustFile,
			"CAIRN_PROJECT=proj-0", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"CAIRN_CPUPROFILE=" + os.Getenv("CAIRN_CPUPROFILE"), "CAIRN_CPUPROFILE_SECONDS=" + os.Getenv("CAIRN_CPUPROFILE_SECONDS")}}
		s := w.serve(env...)
		created := s.call("task_create", map[string]any{"title": "benchmark task", "project": "proj-0"})
		id, _ := structured(w.t, created)["task_id"].(string)
		get := subjectCall(s, "task_get", map[string]any{"task_id": id})
		for i := 0; i < 200; i++ {
			_ = get()
			_ = floor.call()
		}
		pids := descendants(os.Getpid())
		if dp := daemonPID(t, w); dp != 0 {
			pids = append(pids, dp)
			pids = append(pids, descendants(dp)...)
		}
		before := map[int]time.Duration{}
		for _, p := range pids {
			before[p], _ = cpuOf(p)
		}
		const n = 8000
		t0 := time.Now()
		for i := 0; i < n; i++ {
			if err := get(); err != nil {
				t.Fatal(err)
			}
		}
		el := time.Since(t0)
		t1 := time.Now()
		for i := 0; i < n; i++ {
			_ = floor.call()
		}
		fel := time.Since(t1)
		fmt.Printf("mode %v: task_get %v/call, floor %v/call\n", env, el/n, fel/n)
		for _, p := range pids {
			a, comm := cpuOf(p)
			if d := a - before[p]; d > 0 {
				fmt.Printf("  pid %d %s: %v/call (task_get+floor loops)\n", p, comm, d/n)
			}
		}
		s.close()
		stopDaemon(w)
	}
}
