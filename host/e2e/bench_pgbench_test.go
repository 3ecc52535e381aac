package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// BenchmarkPostgresThroughput prints the PostgreSQL throughput figures of
// docs/decisions.md D40: 8 HTTP clients writing through one, two and three
// `cairn serve --http` servers on one database, each figure beside the
// database's own floor measured in the same run on the same throwaway
// server: pgbench's default (TPC-B-like) transaction with 8 connections.
// Goal: with three servers, at least half the floor. The note of each row
// says where a call's time went: the statements the database ran per call
// (pg_stat_statements) and the CPU per call of the database's processes,
// of the cairn servers with their plugins, and of the clients.
func BenchmarkPostgresThroughput(b *testing.B) {
	bin, err := pgtest.Binaries()
	if err != nil {
		b.Skip(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "pgbench")); err != nil {
		b.Skipf("pgbench is not beside pg_ctl in %s (Debian: postgresql-contrib)", bin)
	}
	srv, err := pgtest.Start(bin, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	for range b.N {
		tab := &table{}
		floor := pgbenchTPS(b, srv)
		for _, servers := range []int{1, 2, 3} {
			dsn, err := srv.NewDatabase()
			if err != nil {
				b.Fatal(err)
			}
			f := benchCluster(b, servers, dsn, &createProbe{statements: statementCounter(b, dsn), postmaster: srv.PID()})
			label := fmt.Sprintf("8 clients, %d server", servers)
			if servers > 1 {
				label += "s"
			}
			var goal float64
			if servers == 3 {
				goal = 0.5
			}
			note := "floor: pgbench -c 8 -j 2, same server, same run"
			tab.add(row{name: "task_create, " + label, figure: f.createRate, floor: floor, unit: "/s", minRatio: goal, note: note + "; " + f.createNote})
			tab.add(row{name: "thought_record, " + label, figure: f.thoughtRate, floor: floor, unit: "/s", minRatio: goal, note: note + "; " + f.thoughtNote})
		}
		fmt.Printf("\npgbench floor: %.0f transactions/s\n", floor)
		tab.print()
	}
}

var pgbenchTPSLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbenchTPS initialises pgbench's tables in a database of their own on srv
// and runs its default transaction for 10 s with 8 connections.
func pgbenchTPS(b *testing.B, srv *pgtest.Server) float64 {
	dsn, err := srv.NewDatabase()
	if err != nil {
		b.Fatal(err)
	}
	run := func(args ...string) string {
		out, err := exec.Command(filepath.Join(srv.Bin(), "pgbench"), append(args, dsn)...).CombinedOutput()
		if err != nil {
			b.Fatalf("pgbench %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("-i", "-q")
	out := run("-c", "8", "-j", "2", "-T", "10")
	m := pgbenchTPSLine.FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no tps line in pgbench's output:\n%s", out)
	}
	tps, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		b.Fatal(err)
	}
	return tps
}

// statementCounter creates pg_stat_statements in the database at dsn and
// returns a reader of the statements that database has run so far.
func statementCounter(b *testing.B, dsn string) func() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		b.Fatal(err)
	}
	return func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		var n float64
		err = conn.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::float8 FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
}

// createProbe measures a write phase of benchCluster: statements and CPU
// per call. A nil probe measures nothing.
type createProbe struct {
	statements  func() float64
	postmaster  int
	trees       map[string][]int
	statements0 float64
	cpu0        map[string]time.Duration
}

func (p *createProbe) begin(nodes []*clusterNode) {
	if p == nil {
		return
	}
	p.trees = map[string][]int{"postgres": {p.postmaster}, "clients": {os.Getpid()}}
	for _, n := range nodes {
		n.mu.Lock()
		p.trees["cairn"] = append(p.trees["cairn"], n.cmd.Process.Pid)
		n.mu.Unlock()
	}
	p.statements0, p.cpu0 = p.statements(), p.cpu()
}

// end is "N statements; CPU per call: postgres …, cairn …, clients …".
func (p *createProbe) end(calls int) string {
	if p == nil || calls == 0 {
		return ""
	}
	n := (p.statements() - p.statements0) / float64(calls)
	cpu := p.cpu()
	per := func(name string) float64 { return float64((cpu[name] - p.cpu0[name]).Microseconds()) / float64(calls) }
	return fmt.Sprintf("%.0f statements; CPU per call: postgres %.0f µs, cairn %.0f µs, clients %.0f µs",
		n, per("postgres"), per("cairn"), per("clients"))
}

// cpu is the CPU so far of each named set of process trees. The clients'
// tree is this process alone (its other children are the servers).
func (p *createProbe) cpu() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, roots := range p.trees {
		for _, r := range roots {
			if name == "clients" {
				out[name] += procCPU(r)
				continue
			}
			out[name] += treeCPU(r)
		}
	}
	return out
}

// treeCPU is the CPU of pid and every descendant still running.
func treeCPU(pid int) time.Duration {
	d := procCPU(pid)
	for _, c := range childrenOf(pid) {
		d += treeCPU(c)
	}
	return d
}
