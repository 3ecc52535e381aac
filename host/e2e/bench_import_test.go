package e2e

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkImportMemory imports generated JSON Lines files of 100 MB and
// 1 GB (about 1 KB a task: 100,000 and 1,000,000 tasks) with `cairn
// import`, and one of 1 GB whose last line is not JSON, and reports the
// peak RSS of the whole process tree (cairn and its core plugin: each
// process's VmHWM, summed) beside the goal of docs/decisions.md D41: under
// 400 MB for any input size, since an import streams its input. The inputs
// are written in the benchmark's temporary dir and removed after it. Run
// through `make bench`, -benchtime 1x.
func BenchmarkImportMemory(b *testing.B) {
	tab := &table{}
	for _, c := range []struct {
		name string
		size int64
		bad  bool
	}{
		{"100MB", 100 << 20, false},
		{"1GB", 1 << 30, false},
		{"1GB_bad_last_line", 1 << 30, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := benchWorkspace(b)
			file := filepath.Join(b.TempDir(), "tasks.jsonl")
			n, err := writeImportInput(file, c.size, c.bad)
			if err != nil {
				b.Fatal(err)
			}
			peaks, took, out := importPeak(b, w, file, c.bad)
			what := fmt.Sprintf("%d tasks imported in %s", n, took.Round(time.Second))
			if c.bad {
				what = fmt.Sprintf("refused in %s: %.100s", took.Round(time.Millisecond), out)
			}
			sum, each := 0.0, []string{}
			for _, p := range peaks {
				sum += p
				each = append(each, fmt.Sprintf("%.0f", p))
			}
			tab.add(row{name: "peak RSS, cairn import of " + strings.ReplaceAll(c.name, "_", " ") + " of JSON Lines", figure: sum, unit: "MB", maxFigure: 400,
				note: "VmHWM summed over cairn and its plugins (" + strings.Join(each, " + ") + " MB); " + what})
		})
	}
	tab.print()
}

// writeImportInput writes about size bytes of cairn JSON Lines to file,
// about 1 KB a task with parents and dependencies, and returns how many
// tasks it holds; bad makes the last line not JSON.
func writeImportInput(file string, size int64, bad bool) (int, error) {
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	desc := strings.Repeat("Streams the input twice and keeps a compact plan. ", 18)
	statuses := []string{"backlog", "todo", "in_progress", "review", "done", "cancelled"}
	var written int64
	n := 0
	for written < size {
		var extra string
		if n >= 10 && n%10 == 4 {
			extra += `,"parent_id":"k` + strconv.Itoa(n-7) + `"`
		}
		if n >= 20 && n%7 == 3 {
			extra += `,"depends_on":["k` + strconv.Itoa(n-13) + `","k` + strconv.Itoa(n-20) + `"]`
		}
		line := fmt.Sprintf(`{"task_id":"k%d","title":"task %d of the benchmark import","description":%q,"status":%q,"labels":["bench","l%d"]%s}`+"\n",
			n, n, desc, statuses[n%len(statuses)], n%7, extra)
		k, err := w.WriteString(line)
		if err != nil {
			_ = f.Close()
			return 0, err
		}
		written += int64(k)
		n++
	}
	if bad {
		if _, err := w.WriteString(`{"task_id":"last","title":` + "\n"); err != nil {
			_ = f.Close()
			return 0, err
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return 0, err
	}
	return n, f.Close()
}

// importPeak runs `cairn import file` into a fresh data dir (no daemon:
// the command starts a host of its own and the core plugin) and returns
// the VmHWM of every process of its tree, in MB, sampled until it exits,
// how long it took and the last line of its output.
func importPeak(b *testing.B, w *workspace, file string, bad bool) ([]float64, time.Duration, string) {
	b.Helper()
	add := exec.Command(cairnBin, "project", "add", "imp")
	add.Env, add.Dir = w.env, w.root
	if out, err := add.CombinedOutput(); err != nil {
		b.Fatalf("project add: %v %s", err, out)
	}
	cmd := exec.Command(cairnBin, "import", file, "--project", "imp")
	cmd.Env, cmd.Dir = w.env, w.root
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	hwm := map[int]int{} // pid → VmHWM in kB
	var err error
	for running := true; running; {
		select {
		case err = <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
		}
		sampleHWM(cmd.Process.Pid, hwm)
	}
	took := time.Since(start)
	if (err != nil) != bad {
		b.Fatalf("cairn import: %v\n%.2000s", err, out.String())
	}
	pids := slices.Sorted(maps.Keys(hwm))
	peaks := make([]float64, len(pids))
	for i, pid := range pids {
		peaks[i] = float64(hwm[pid]) / 1024
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return peaks, took, lines[len(lines)-1]
}

// sampleHWM records the VmHWM of pid and its descendants into hwm, keeping
// each process's highest reading (one that has exited keeps its last).
func sampleHWM(pid int, hwm map[int]int) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			if v, _ := strconv.Atoi(f[1]); v > hwm[pid] {
				hwm[pid] = v
			}
		}
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				sampleHWM(n, hwm)
			}
		}
	}
}
