package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/internal/poll"
)

func TestProcStatIsReadPastACommWithSpacesAndParentheses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw   string
		comm  string
		ticks uint64
		bad   bool
	}{
		{raw: "42 (cairn) S 1 42 42 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 12 0", comm: "cairn", ticks: 281},
		{raw: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0", comm: "a (b) c", ticks: 10},
		{raw: "7 cairn S 1", bad: true},
		{raw: "7 (cairn) S 1 7 7", bad: true},
		{raw: "7 (cairn) S 1 7 7 0 -1 0 0 0 0 0 x 1 0", bad: true},
	} {
		got, err := parseProcStat([]byte(tc.raw))
		if tc.bad {
			if err == nil {
				t.Errorf("%q: read as %+v, want an error", tc.raw, got)
			}
			continue
		}
		if err != nil || got.comm != tc.comm || got.ticks != tc.ticks {
			t.Errorf("%q: got %+v, %v; want %s with %d ticks", tc.raw, got, err, tc.comm, tc.ticks)
		}
	}
}

func TestMachineStatCountsBusyAndIdleTicks(t *testing.T) {
	t.Parallel()
	// user nice system idle iowait irq softirq steal guest guest_nice
	busy, total, err := parseMachineStat([]byte("cpu  100 5 40 800 50 3 2 1 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"))
	if err != nil || busy != 151 || total != 1001 {
		t.Fatalf("got busy %d, total %d, %v; want 151, 1001", busy, total, err)
	}
	for _, raw := range []string{"", "intr 1 2 3\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 7 x\n"} {
		if _, _, err := parseMachineStat([]byte(raw)); err == nil {
			t.Errorf("%q: read, want an error", raw)
		}
	}
}

func TestCPUBetweenCountsEachKindAndNewProcessesFromNothing(t *testing.T) {
	t.Parallel()
	a := cpuSnapshot{busy: 100, total: 1000, procs: map[int]procCPU{
		1: {comm: "cairn", ticks: 50},
		2: {comm: "postgres", ticks: 10},
		3: {comm: "bash", ticks: 5},
		4: {comm: "postgres", ticks: 70}, // ends before b; its pid goes to a cairn-areas
	}}
	b := cpuSnapshot{busy: 250, total: 1200, procs: map[int]procCPU{
		1: {comm: "cairn", ticks: 150},
		2: {comm: "postgres", ticks: 30},
		3: {comm: "bash", ticks: 6},
		4: {comm: "cairn-areas", ticks: 40},
		5: {comm: "postgres", ticks: 20}, // started in between
		6: {comm: "loadgen", ticks: 300},
	}}
	sec, busy := cpuBetween(a, b)
	want := map[string]float64{"cairn": 1, "cairn-areas": 0.4, "postgres": 0.4, "loadgen": 3, "other": 0.01}
	for g, w := range want {
		if d := sec[g] - w; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %.3f s, want %.3f", g, sec[g], w)
		}
	}
	if busy != 0.75 {
		t.Errorf("busy %.3f, want 0.75", busy)
	}
	row := profileRow("task_create", 1000, sec, busy, nil)
	if row != "| task_create | 75 % | 1000 / 400 / 400 / 3000 / 10 | — | no PostgreSQL |" {
		t.Errorf("row %q", row)
	}
}

func TestWaitSummaryNamesTheCommonestFirst(t *testing.T) {
	t.Parallel()
	w := &waitTally{counts: map[string]int{}}
	if n, top := w.summary(); n != 0 || top != "not sampled" {
		t.Fatalf("no samples: %v %q", n, top)
	}
	w.add(map[string]int{"Lock:advisory": 3, "on CPU": 1})
	w.add(map[string]int{"Lock:advisory": 2, "idle in transaction": 1, "IO:WALSync": 1})
	w.add(map[string]int{"Client:ClientRead": 1, "LWLock:WALWrite": 1})
	n, top := w.summary()
	if n != 10.0/3 || top != "Lock:advisory 50 %, Client:ClientRead 10 %, IO:WALSync 10 %, LWLock:WALWrite 10 %" {
		t.Fatalf("got %v, %q", n, top)
	}
}

// The snapshot of the real /proc holds this process, and its CPU time
// grows while it works.
func TestCPUSnapshotOfThisMachineSeesThisProcessWork(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc:", err)
	}
	a, err := takeCPUSnapshot("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me, ok := a.procs[os.Getpid()]
	if !ok || a.total == 0 {
		t.Fatalf("this process (%d) is not in the snapshot, or no machine ticks: %+v", os.Getpid(), a.total)
	}
	x := 0
	var b cpuSnapshot
	poll.Until(t, time.Minute, "this process's CPU time to grow", func() bool {
		for i := 0; i < 1e7; i++ {
			x += i
		}
		if b, err = takeCPUSnapshot("/proc"); err != nil {
			t.Fatal(err)
		}
		return b.procs[os.Getpid()].ticks > me.ticks
	})
	if sec, _ := cpuBetween(a, b); sec[cpuGroup(me.comm)] <= 0 {
		t.Fatalf("no CPU counted for %s (%d)", me.comm, x)
	}
}

// Against a real PostgreSQL: a backend holding an advisory lock in an open
// transaction reads as idle in transaction, and one waiting for the lock
// as Lock:advisory.
func TestWaitsSampleABackendWaitingOnTheLock(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	const lock = 914_021
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	waiter, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT pg_advisory_lock($1), pg_advisory_unlock($1)", lock)
		waited <- err
	}()
	sctx, stop := context.WithCancel(ctx)
	w := sampleWaits(sctx, dsn, 10*time.Millisecond)
	poll.Until(t, time.Minute, "the sampler to see the waiter", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.counts["Lock:advisory"] > 0 && w.counts["idle in transaction"] > 0
	})
	stop()
	_, top := w.summary()
	if !strings.Contains(top, "Lock:advisory") || !strings.Contains(top, "idle in transaction") {
		t.Fatalf("summary %q", top)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
}

// Whatever /proc holds, reading it never panics, and a comm read is the
// text between the parentheses of the line it came from.
func FuzzProcStat(f *testing.F) {
	f.Add([]byte("42 (cairn) S 1 42 42 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 12 0"))
	f.Add([]byte("7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 9 1 0 0 20 0 1 0"))
	f.Add([]byte("cpu  100 5 40 800 50 3 2 1 7 0\n"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if p, err := parseProcStat(raw); err == nil && !strings.Contains(string(raw), "("+p.comm+")") {
			t.Fatalf("comm %q is not between parentheses in %q", p.comm, raw)
		}
		_, _, _ = parseMachineStat(raw)
	})
}
