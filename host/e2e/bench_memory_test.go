package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/host/clientsession"
)

// BenchmarkLargeMessages reports the peak RSS summed over every cairn
// process (relay, daemon or host, plugins) while one session sends one, then
// eight, messages just under CAIRN_MAX_MESSAGE at once, beside the goal of
// docs/decisions.md D33: eight stay under 400 MB. Two shapes: sdd_state set
// with a value of millions of small items (the costliest to decode), and
// task_create with one huge description. Run through `make bench`, -benchtime 1x.
func BenchmarkLargeMessages(b *testing.B) {
	tab := &table{}
	for _, mode := range []struct {
		name string
		env  []string
	}{{"relay", relayEnv}, {"--no-daemon", nil}} {
		for _, shape := range []string{"sdd_state value", "task_create description"} {
			for _, n := range []int{1, 8} {
				name := fmt.Sprintf("%d × %s, %s", n, shape, mode.name)
				b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
					peak, base, took := largeMessages(b, mode.env, shape, n)
					tab.add(row{name: "peak RSS, " + name, figure: peak, unit: "MB", maxFigure: 400,
						note: fmt.Sprintf("summed over every cairn process; %.0f MB before; all answered in %s", base, took.Round(time.Millisecond))})
				})
			}
		}
	}
	tab.print()
}

// largeMessages sends n messages of one shape at once in one session and
// returns the peak and starting RSS summed over the process tree, in MB.
func largeMessages(b *testing.B, env []string, shape string, n int) (peak, base float64, took time.Duration) {
	w := benchWorkspace(b)
	cmd := exec.Command(cairnBin, "serve")
	cmd.Env = append(append([]string{}, w.env...), env...)
	cmd.Dir = w.root
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = in.Close()
		_ = cmd.Wait()
	}()
	lines := bufio.NewReaderSize(out, 1<<20)
	answer := func() map[string]any {
		for {
			line, err := lines.ReadBytes('\n')
			if err != nil {
				b.Fatalf("cairn closed its stdout: %v", err)
			}
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["id"] != nil {
				return m
			}
		}
	}
	send := func(s string) {
		if _, err := in.Write([]byte(s + "\n")); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"server_ping","arguments":{}}}`)
	answer()
	time.Sleep(3 * time.Second) // plugins started and settled
	roots := func() []int {
		pids := []int{cmd.Process.Pid}
		if d := daemonPID(w.t, w); d != 0 && len(env) > 0 {
			pids = append(pids, d)
		}
		return pids
	}
	base = treeRSS(roots())
	var msgs []byte
	for i := 0; i < n; i++ {
		msgs = append(msgs, largeMessage(shape, 100+i, clientsession.DefaultMaxMessage-4096)...)
	}
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			r := treeRSS(roots())
			mu.Lock()
			peak = max(peak, r)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	go func() { _, _ = in.Write(msgs) }()
	for i := 0; i < n; i++ {
		m := answer()
		res, _ := m["result"].(map[string]any)
		meta, _ := res["_meta"].(map[string]any)
		if fmt.Sprint(meta["status"]) != "400" {
			b.Fatalf("answer %d: %.300v, want a 400 refusal", i, m)
		}
	}
	took = time.Since(start)
	close(stop)
	<-sampled
	return peak, base, took
}

// largeMessage is one tools/call line of about size bytes.
func largeMessage(shape string, id, size int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":`, id)
	var args string
	switch shape {
	case "sdd_state value":
		args = `"sdd_state","arguments":{"action":"set","keyPath":"k","value":[` + strings.Repeat("0,", (size-len(head)-80)/2) + `0]}}}`
	default:
		args = `"task_create","arguments":{"title":"t","project":"proj-0","description":"` + strings.Repeat("a", size-len(head)-90) + `"}}}`
	}
	return []byte(head + args + "\n")
}

// treeRSS sums VmRSS over roots and all their descendants, in MB.
func treeRSS(roots []int) float64 {
	kb := 0
	seen := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				v, _ := strconv.Atoi(f[1])
				kb += v
			}
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					walk(n)
				}
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return float64(kb) / 1024
}
