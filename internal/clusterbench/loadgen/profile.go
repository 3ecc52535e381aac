package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A phase's profile says what limits the writes on this machine: the CPU
// each kind of process spent per write (cairn servers, the core plugins
// they run from cairn-areas, PostgreSQL, loadgen itself), how busy the
// machine's cores were, and what PostgreSQL's busy backends were doing,
// sampled from pg_stat_activity. Idle cores with backends waiting on a
// lock point at the area's cluster-wide writer lock; no idle core points
// at the CPU.

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every Linux
// ABI loadgen is built for (proc(5)); reading sysconf would need cgo.
const userHZ = 100

// procCPU is one process's comm and CPU time (user + system, in ticks).
type procCPU struct {
	comm  string
	ticks uint64
}

// cpuSnapshot is every process's CPU time and the machine's busy and total
// ticks at one moment.
type cpuSnapshot struct {
	procs       map[int]procCPU
	busy, total uint64
}

// takeCPUSnapshot reads root (/proc). Processes that vanish while it reads
// are left out.
func takeCPUSnapshot(root string) (cpuSnapshot, error) {
	s := cpuSnapshot{procs: map[int]procCPU{}}
	stat, err := os.ReadFile(filepath.Join(root, "stat"))
	if err != nil {
		return s, err
	}
	if s.busy, s.total, err = parseMachineStat(stat); err != nil {
		return s, err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return s, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		if p, err := parseProcStat(raw); err == nil {
			s.procs[pid] = p
		}
	}
	return s, nil
}

// parseProcStat reads the comm and utime+stime of /proc/<pid>/stat. The
// comm is whatever lies between the first "(" and the last ")", since a
// process may name itself with spaces and parentheses.
func parseProcStat(raw []byte) (procCPU, error) {
	lparen, rparen := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
	if lparen < 0 || rparen < lparen {
		return procCPU{}, fmt.Errorf("no (comm) in %q", raw)
	}
	// After the comm: state(3) ppid(4) … utime(14) stime(15).
	fields := strings.Fields(string(raw[rparen+1:]))
	if len(fields) < 13 {
		return procCPU{}, fmt.Errorf("%d fields after the comm, want 13 or more", len(fields))
	}
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procCPU{}, fmt.Errorf("utime %q, stime %q: not counts", fields[11], fields[12])
	}
	return procCPU{comm: string(raw[lparen+1 : rparen]), ticks: utime + stime}, nil
}

// parseMachineStat reads the busy and total ticks of all cores from the
// "cpu" line of /proc/stat: busy is user, nice, system, irq, softirq and
// steal; total adds idle and iowait (guest time is inside user already).
func parseMachineStat(raw []byte) (busy, total uint64, err error) {
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat begins %q, want the cpu line with 8 counts", line)
	}
	var n [8]uint64
	for i := range n {
		if n[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/stat cpu field %d: %w", i+1, err)
		}
	}
	busy = n[0] + n[1] + n[2] + n[5] + n[6] + n[7]
	return busy, busy + n[3] + n[4], nil
}

// cpuGroups is the order the profile prints its process kinds in.
var cpuGroups = []string{"cairn", "cairn-areas", "postgres", "loadgen", "other"}

// cpuGroup is the kind of process a comm names.
func cpuGroup(comm string) string {
	switch comm {
	case "cairn", "cairn-areas", "postgres", "loadgen":
		return comm
	}
	return "other"
}

// cpuBetween is the CPU seconds each kind of process spent from a to b (a
// process that started in between counts from nothing; one that ended in
// between is not seen) and the share of the machine's time its cores were
// busy.
func cpuBetween(a, b cpuSnapshot) (seconds map[string]float64, busy float64) {
	seconds = map[string]float64{}
	for pid, p := range b.procs {
		before := uint64(0)
		if q, ok := a.procs[pid]; ok && q.comm == p.comm && q.ticks <= p.ticks {
			before = q.ticks
		}
		seconds[cpuGroup(p.comm)] += float64(p.ticks-before) / userHZ
	}
	if b.total > a.total {
		busy = float64(b.busy-a.busy) / float64(b.total-a.total)
	}
	return seconds, busy
}

// waitTally counts what PostgreSQL's busy client backends were doing over
// a phase's samples.
type waitTally struct {
	mu      sync.Mutex
	samples int
	counts  map[string]int
}

// waitsQuery names what each busy client backend is doing: a wait event
// while active, "on CPU" when active without one, or its state ("idle in
// transaction": holding its transaction, and its locks, while the server
// that opened it works between statements).
const waitsQuery = `SELECT CASE WHEN state = 'active' THEN coalesce(wait_event_type || ':' || wait_event, 'on CPU') ELSE state END, count(*)
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND state IS DISTINCT FROM 'idle' AND pid <> pg_backend_pid()
GROUP BY 1`

// sampleWaits samples pg_stat_activity through dsn every interval until
// ctx ends. A sample that fails ends the sampling quietly: the profile then
// says how many samples it has.
func sampleWaits(ctx context.Context, dsn string, every time.Duration) *waitTally {
	t := &waitTally{counts: map[string]int{}}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return t
	}
	go func() {
		defer conn.Close(context.Background())
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := conn.Query(ctx, waitsQuery)
			if err != nil {
				return
			}
			sample := map[string]int{}
			for rows.Next() {
				var what string
				var n int
				if rows.Scan(&what, &n) == nil {
					sample[what] += n
				}
			}
			rows.Close()
			if rows.Err() != nil {
				return
			}
			t.add(sample)
		}
	}()
	return t
}

func (t *waitTally) add(sample map[string]int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.samples++
	for what, n := range sample {
		t.counts[what] += n
	}
}

// summary is the mean number of busy backends and the four commonest
// things they did, each with its share of all busy-backend samples.
func (t *waitTally) summary() (busy float64, top string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.samples == 0 {
		return 0, "not sampled"
	}
	all := 0
	whats := make([]string, 0, len(t.counts))
	for what, n := range t.counts {
		whats = append(whats, what)
		all += n
	}
	if all == 0 {
		return 0, "none busy"
	}
	slices.SortFunc(whats, func(a, b string) int {
		if d := t.counts[b] - t.counts[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, 4)
	for _, what := range whats[:min(4, len(whats))] {
		parts = append(parts, fmt.Sprintf("%s %.0f %%", what, 100*float64(t.counts[what])/float64(all)))
	}
	return float64(all) / float64(t.samples), strings.Join(parts, ", ")
}

// profileRow is the tail of a Markdown row for one phase, after the
// server count run.sh puts first: the phase, how busy the machine was, the
// CPU per write of each kind of process in µs, and PostgreSQL's busy
// backends.
func profileRow(phase string, writes int64, seconds map[string]float64, busy float64, w *waitTally) string {
	cpu := make([]string, 0, len(cpuGroups))
	for _, g := range cpuGroups {
		per := 0.0
		if writes > 0 {
			per = seconds[g] / float64(writes) * 1e6
		}
		cpu = append(cpu, strconv.FormatFloat(per, 'f', 0, 64))
	}
	var pg string
	if w != nil {
		n, top := w.summary()
		pg = fmt.Sprintf("%.1f | %s", n, top)
	} else {
		pg = "— | no PostgreSQL"
	}
	return fmt.Sprintf("| %s | %.0f %% | %s | %s |", phase, 100*busy, strings.Join(cpu, " / "), pg)
}
