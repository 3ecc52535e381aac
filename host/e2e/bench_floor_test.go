package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-mcp/cairn/sdk"
)

// The floors: one tools/call to a minimal mcp-go stdio server
// (internal/floor), and to the floor of cairn's own shape
// (bench_floor_shapes_test.go), measured in the same run as the figure
// they are compared with, sample for sample interleaved with it, so a
// noisy shared machine slows all alike. Every figure of `make bench` is a
// ratio to one of them.

var (
	floorOnce sync.Once
	floorBin  string
	floorErr  error
)

// buildFloor builds the floor server once per test binary, static as cairn
// is built (buildCairn), so neither start is spared the dynamic loader.
func buildFloor() (string, error) {
	floorOnce.Do(func() {
		floorBin = filepath.Join(binDir, "floor")
		cmd := exec.Command("go", "build", "-o", floorBin, "github.com/cairn-mcp/cairn/internal/floor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		floorErr = cmd.Run()
	})
	return floorBin, floorErr
}

// floorClient is an initialized MCP client on a fresh floor server.
type floorClient struct{ c *client.Client }

func startFloor(ctx context.Context) (*floorClient, error) {
	bin, err := buildFloor()
	if err != nil {
		return nil, err
	}
	c, err := client.NewStdioMCPClient(bin, nil)
	if err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "bench-client", Version: "1.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return &floorClient{c: c}, nil
}

func (f *floorClient) call() error {
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"message": "benchmark"}
	res, err := f.c.CallTool(context.Background(), req)
	if err == nil && res.IsError {
		err = fmt.Errorf("floor echo failed")
	}
	return err
}

func (f *floorClient) close() { _ = f.c.Close() }

// samples are durations of one kind of operation.
type samples []time.Duration

func (s samples) quantile(q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	c := append(samples(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[int(q*float64(len(c)-1)+0.5)]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// interleave times floor and subject alternately: at least minN pairs, then
// more until budget is spent or maxN pairs are taken.
func interleave(floor, subject func() error, minN, maxN int, budget time.Duration) (fl, sub samples, err error) {
	got, err := interleaveAll([]func() error{floor, subject}, minN, maxN, budget)
	if err != nil {
		return nil, nil, err
	}
	return got[0], got[1], nil
}

// interleaveAll times each of fns in turn, round after round: at least
// minN rounds, then more until budget is spent or maxN rounds are taken.
// The last of fns is the subject; the ones before it are its floors (the
// floor of its shape and the bare mcp-go floor), each sampled beside it.
func interleaveAll(fns []func() error, minN, maxN int, budget time.Duration) ([]samples, error) {
	out := make([]samples, len(fns))
	start := time.Now()
	for i := 0; i < maxN && (i < minN || time.Since(start) < budget); i++ {
		for k, fn := range fns {
			t0 := time.Now()
			if err := fn(); err != nil {
				if k < len(fns)-1 {
					err = fmt.Errorf("floor: %w", err)
				}
				return nil, err
			}
			out[k] = append(out[k], time.Since(t0))
		}
	}
	return out, nil
}

// row is one line of the table `make bench` prints.
type row struct {
	name string
	// figure and floor in unit; ratio = figure / floor.
	figure, floor float64
	unit          string
	p99           float64
	// goal: at most maxRatio (latency) or at least minRatio (rates), or
	// at most maxFigure (memory, no floor).
	maxRatio, minRatio, maxFigure float64
	note                          string
}

func (r row) ratio() float64 {
	if r.floor == 0 {
		return 0
	}
	return r.figure / r.floor
}

func (r row) goal() (string, bool) {
	switch {
	case r.maxRatio > 0:
		return fmt.Sprintf("≤ %g×", r.maxRatio), r.ratio() <= r.maxRatio
	case r.minRatio > 0:
		return fmt.Sprintf("≥ %g×", r.minRatio), r.ratio() >= r.minRatio
	case r.maxFigure > 0:
		return fmt.Sprintf("≤ %.0f %s", r.maxFigure, r.unit), r.figure <= r.maxFigure
	}
	return "—", true
}

// latencyRow turns interleaved samples into a row (p50 against p50).
func latencyRow(name string, fl, sub samples, maxRatio float64) row {
	return row{name: name, figure: ms(sub.quantile(0.5)), floor: ms(fl.quantile(0.5)), unit: "ms",
		p99: ms(sub.quantile(0.99)), maxRatio: maxRatio, note: fmt.Sprintf("n=%d", len(sub))}
}

// table collects rows and prints them as one markdown table.
type table struct {
	mu   sync.Mutex
	rows []row
}

func (t *table) add(r row) {
	t.mu.Lock()
	t.rows = append(t.rows, r)
	t.mu.Unlock()
	// Also as it comes, so a long run shows progress.
	fmt.Fprintf(os.Stderr, "bench: %s\n", formatRow(r))
}

func formatRow(r row) string {
	goal, met := r.goal()
	mark := "yes"
	switch {
	case goal == "—":
		mark = "—"
	case !met:
		mark = "**no**"
	}
	floor, ratio, p99 := "—", "—", "—"
	if r.floor > 0 {
		floor = fmt.Sprintf("%.3g %s", r.floor, r.unit)
		ratio = fmt.Sprintf("%.2f", r.ratio())
	}
	if r.p99 > 0 {
		p99 = fmt.Sprintf("%.3g ms", r.p99)
	}
	return fmt.Sprintf("| %s | %.4g %s | %s | %s | %s | %s | %s | %s |", r.name, r.figure, r.unit, floor, ratio, p99, goal, mark, r.note)
}

func (t *table) print() {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Println()
	fmt.Println("| Figure | Measured | Floor | Ratio | p99 | Goal | Met | Note |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range t.rows {
		fmt.Println(formatRow(r))
	}
	fmt.Println()
}

// memory of a process tree: the sum of RSS and of PSS over a process and
// its children, in MB, from /proc/<pid>/smaps_rollup.
func treeMemory(root int) (rss, pss float64, procs int, err error) {
	pids := append([]int{root}, childrenOf(root)...)
	for _, pid := range pids {
		r, p, err := rollup(pid)
		if err != nil {
			return 0, 0, 0, err
		}
		rss, pss = rss+r, pss+p
	}
	return rss / 1024, pss / 1024, len(pids), nil
}

// childrenOf lists the direct children of pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at ')'.
		s := string(raw)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// rollup reads Rss and Pss (kB) of one process.
func rollup(pid int) (rss, pss float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "Rss:":
			rss = v
		case "Pss:":
			pss = v
		}
	}
	return rss, pss, sc.Err()
}

// benchWorkspace is a workspace whose files the benchmark removes.
func benchWorkspace(b *testing.B) *workspace {
	b.Helper()
	t := &testing.T{}
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".cairn", "plugins"), 0o755); err != nil {
		b.Fatal(err)
	}
	return &workspace{t: t, root: root, env: []string{
		"CAIRN_ROOT=" + root,
		"CAIRN_LOG_LEVEL=warn",
		"CAIRN_DAEMON=off",
		"CAIRN_TRUST_FILE=" + trustFile,
		"CAIRN_PROJECT=proj-0",
		sdk.IdleEnv + "=" + benchIdle,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		// CAIRN_CALL_LANE=off on the benchmark's command line measures
		// the gRPC path the lane replaced, CAIRN_LANE_INLINE=off the
		// hand-off Quick calls skip, CAIRN_STORE_JOURNAL=off the store's
		// commits without the journal; CAIRN_CPUPROFILE profiles every
		// cairn process (internal/procstart).
		"CAIRN_CALL_LANE=" + os.Getenv("CAIRN_CALL_LANE"),
		"CAIRN_LANE_INLINE=" + os.Getenv("CAIRN_LANE_INLINE"),
		"CAIRN_STORE_JOURNAL=" + os.Getenv("CAIRN_STORE_JOURNAL"),
		"CAIRN_CPUPROFILE=" + os.Getenv("CAIRN_CPUPROFILE"),
		"CAIRN_CPUPROFILE_SECONDS=" + os.Getenv("CAIRN_CPUPROFILE_SECONDS"),
	}}
}

// relayEnv makes a session relay to the workspace's shared daemon.
var relayEnv = []string{"CAIRN_DAEMON=on", "CAIRN_DAEMON_IDLE=3s"}

// benchIdle shortens how long plugins wait before trimming idle memory, so
// the idle figures need not wait the default 30 s.
const benchIdle = "2s"

// mustSession starts a session or stops the benchmark.
func mustSession(b *testing.B, w *workspace, env ...string) *session {
	b.Helper()
	s, err := startSession(w, env...)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// subjectCall is one tools/call that must succeed.
func subjectCall(s *session, name string, args map[string]any) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := s.callCtx(ctx, name, args)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return fmt.Errorf("%s %v failed: %v", name, args, res.StructuredContent)
		}
		return nil
	}
}

// stopDaemon ends the workspace's daemon, if one runs, and waits for it.
func stopDaemon(w *workspace) {
	pid := daemonPID(w.t, w)
	if pid == 0 {
		return
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	_ = p.Signal(os.Interrupt)
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	_ = p.Kill()
}
