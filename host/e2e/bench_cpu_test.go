package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuShare is where a figure's CPU went: each process of the server (the
// relays together, the daemon, each plugin) and the benchmark's own
// clients. A write rate that stays under its floor while the cores are
// busy is explained by this table, not by waiting.
type cpuShare struct {
	w      *workspace
	relays []int
	start  map[string]time.Duration
}

// clientsName is the benchmark process's own share: mcp-go clients.
const clientsName = "clients"

func startCPUShare(w *workspace, sessions []*session) *cpuShare {
	c := &cpuShare{w: w}
	for _, s := range sessions {
		c.relays = append(c.relays, s.cmd.Process.Pid)
	}
	c.start = c.sample()
	return c
}

// sample reads the CPU used so far by every process of the share.
func (c *cpuShare) sample() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, pid := range c.relays {
		out["relays"] += procCPU(pid)
	}
	if d := daemonPID(c.w.t, c.w); d != 0 {
		out["daemon"] = procCPU(d)
		for _, pid := range childrenOf(d) {
			out[processName(pid)] += procCPU(pid)
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		out[clientsName] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return out
}

// perOp is the CPU each share used per operation since the start, as
// "daemon 310 µs, core 620 µs, …", largest first, with the total.
func (c *cpuShare) perOp(ops int64) string {
	if ops == 0 {
		return ""
	}
	end := c.sample()
	type part struct {
		name string
		us   float64
	}
	var parts []part
	total := 0.0
	for name, d := range end {
		us := float64((d - c.start[name]).Microseconds()) / float64(ops)
		if us < 1 {
			continue
		}
		parts = append(parts, part{name, us})
		total += us
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].us > parts[j].us })
	var b strings.Builder
	fmt.Fprintf(&b, "CPU per write %.0f µs:", total)
	for _, p := range parts {
		fmt.Fprintf(&b, " %s %.0f", p.name, p.us)
	}
	return b.String()
}

// procCPU is a process's user and system CPU from /proc (clock ticks of
// 10 ms: good to a few percent over a figure's seconds of sampling).
func procCPU(pid int) time.Duration {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	// After the command: state(0) ppid … utime(11) stime(12).
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// callCPU is the CPU a call costs each process of a tree, sampled around
// an interleaved run: the floor server's and cairn's, side by side.
type callCPU struct {
	roots []int
	start map[string]time.Duration
}

// startCallCPU samples the trees under roots (pids; 0 is skipped).
func startCallCPU(roots ...int) *callCPU {
	c := &callCPU{roots: roots}
	c.start = c.sample()
	return c
}

func (c *callCPU) sample() map[string]time.Duration {
	out := map[string]time.Duration{}
	seen := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		out[processName(pid)] += procCPU(pid)
		for _, child := range childrenOf(pid) {
			walk(child)
		}
	}
	for _, r := range c.roots {
		if r > 0 { // no daemon: daemonPID is 0
			walk(r)
		}
	}
	return out
}

// perCall is "name µs" for every process, per call, largest first.
func (c *callCPU) perCall(calls int) string {
	end := c.sample()
	type part struct {
		name string
		us   float64
	}
	var parts []part
	for name, d := range end {
		if us := float64((d - c.start[name]).Microseconds()) / float64(calls); us >= 1 {
			parts = append(parts, part{name, us})
		}
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].us > parts[j].us })
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.0f µs", p.name, p.us)
	}
	return b.String()
}

// processName names a cairn process by its role: the area a plugin
// process serves, "daemon", or "serve" for the process the client started
// (the relay, or with --no-daemon the host itself); else the executable's
// name.
func processName(pid int) string {
	raw, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	for i, a := range args {
		switch {
		case a == "__serve-plugin" && i+1 < len(args):
			return args[i+1]
		case a == "__daemon":
			return "daemon"
		case a == "serve":
			return "serve"
		}
	}
	return filepath.Base(args[0])
}

// floorPID is the floor server's process, a child of this benchmark.
func floorPID() int {
	for _, pid := range childrenOf(os.Getpid()) {
		if processName(pid) == "floor" {
			return pid
		}
	}
	return 0
}

// total is the CPU per call summed over the tree.
func (c *callCPU) total(calls int) float64 {
	end := c.sample()
	var d time.Duration
	for name, v := range end {
		d += v - c.start[name]
	}
	return float64(d.Microseconds()) / float64(calls)
}
