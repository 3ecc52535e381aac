package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkAgentWrites prints what one agent's write costs on a store of
// 10,000 tasks, through the relay and with --no-daemon: task_create and a
// status change (backlog → todo, then todo → in_progress) at p50, each
// against a durable one-key bbolt update on the same disk taken between
// the calls, nothing subtracted (goal ≤ 3×); and the bytes the core plugin
// wrote per call, from /proc/<pid>/io (goal ≤ 40 KB per task_create).
//
// The bytes are wchar, what the plugin hands to write calls (its store's
// pages, a few hundred bytes of lane frames): write_bytes, what the kernel
// accounts to storage, is inflated many times over on a store file copied
// into place (the seeded one) and so says little about a write.
func BenchmarkAgentWrites(b *testing.B) {
	tab := &table{}
	for _, mode := range []struct {
		name string
		env  []string
	}{{"relay", relayEnv}, {"--no-daemon", nil}} {
		b.Run(mode.name, func(b *testing.B) { benchSingleWrites(b, tab, mode.name, mode.env) })
	}
	tab.print()
}

// singleWriteGoal is the latency goal of one write against a one-key
// bbolt commit; createBytesGoal the bytes a task_create may write.
const (
	singleWriteGoal = 3
	createBytesGoal = 40 << 10
)

func benchSingleWrites(b *testing.B, tab *table, mode string, env []string) {
	const n = 10_000
	w := benchWorkspace(b)
	if _, err := seedCached(w.dataDir(), n); err != nil {
		b.Fatal(err)
	}
	s := mustSession(b, w, env...)
	defer func() {
		s.close()
		stopDaemon(w)
	}()
	// The floor's file lies beside the workspace, on the same disk.
	floorDir := b.TempDir()
	if err := sameFileSystem(floorDir, w.dataDir()); err != nil {
		b.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(floorDir, "floor.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	commits := 0
	floor := func() error { commits++; return boltPut(db, commits) }
	for i := 0; i < 50; i++ { // warm the session, the plugin and the floor
		if err := subjectCall(s, "server_ping", map[string]any{})(); err != nil {
			b.Fatal(err)
		}
		_ = floor()
	}
	core := corePluginPID(w, s)
	if core == 0 {
		b.Fatal("no core plugin process to measure")
	}
	// task_create: the ids it returns are the tasks the status changes
	// below move, each once per step.
	var ids []string
	create := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := s.callCtx(ctx, "task_create", map[string]any{
			"title":       fmt.Sprintf("measured write %d for the parser cache", len(ids)),
			"description": "What the benchmark writes: a title and a short description, one label.",
			"labels":      []string{"bench"}, "project": "proj-0",
		})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("task_create: %v", res.StructuredContent)
		}
		id, _ := res.StructuredContent.(map[string]any)["task_id"].(string)
		ids = append(ids, id)
		return nil
	}
	writeRow(b, tab, "task_create, "+mode+", 10k tasks", floor, create, 200, 600, core, createBytesGoal)
	for _, step := range []string{"todo", "in_progress"} {
		i := 0
		moved := ids
		move := func() error {
			if i >= len(moved) {
				return fmt.Errorf("ran out of created tasks to move to %s", step)
			}
			id := moved[i]
			i++
			return subjectCall(s, "task_update", map[string]any{"task_id": id, "status": step})()
		}
		// As many moves as creates were measured, no more.
		writeRow(b, tab, "task_update to "+step+", "+mode+", 10k tasks", floor, move, len(moved), len(moved), core, 0)
	}
}

// writeRow measures between minN and maxN calls of fn interleaved with
// floor (at least minN, more while the budget lasts) and adds their row,
// with the bytes the core plugin wrote per call against bytesGoal (0: none).
func writeRow(b *testing.B, tab *table, name string, floor, fn func() error, minN, maxN, core int, bytesGoal float64) {
	w0 := procWritten(core)
	fl, sub, err := interleave(floor, fn, minN, maxN, 3*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	written := float64(procWritten(core)-w0) / float64(len(sub))
	r := latencyRow(name, fl, sub, singleWriteGoal)
	r.note += fmt.Sprintf("; floor: one durable bbolt update (fsync), same file system; core plugin writes %.0f KB per call", written/1024)
	tab.add(r)
	if bytesGoal > 0 {
		tab.add(row{name: "bytes handed to write(2)/pwrite(2) per " + name, figure: written / 1024, unit: "KB", maxFigure: bytesGoal / 1024,
			note: fmt.Sprintf("wchar of the core plugin process (/proc/<pid>/io) over %d calls", len(sub))})
	}
}

// sameFileSystem refuses a floor whose file would lie on another file
// system than the store it is compared with: a commit's fsync costs what
// the disk under it costs.
func sameFileSystem(a, b string) error {
	var sa, sb syscall.Stat_t
	if err := syscall.Stat(a, &sa); err != nil {
		return err
	}
	if err := syscall.Stat(b, &sb); err != nil {
		return err
	}
	if sa.Dev != sb.Dev {
		return fmt.Errorf("the floor's %s and the store's %s lie on different file systems", a, b)
	}
	return nil
}

// corePluginPID finds the core plugin serving the session: a child of the
// daemon, or of the session's own process with --no-daemon.
func corePluginPID(w *workspace, s *session) int {
	parents := []int{s.cmd.Process.Pid}
	if d := daemonPID(w.t, w); d != 0 {
		parents = append(parents, d)
	}
	for _, p := range parents {
		for _, c := range childrenOf(p) {
			if processName(c) == "core" {
				return c
			}
		}
	}
	return 0
}

var wcharLine = regexp.MustCompile(`(?m)^wchar: (\d+)$`)

// procWritten is what a process has handed to write calls so far.
func procWritten(pid int) int64 {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "io"))
	if err != nil {
		return 0
	}
	m := wcharLine.FindSubmatch(raw)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}
