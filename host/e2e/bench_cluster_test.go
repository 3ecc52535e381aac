package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
)

// BenchmarkClusterScaling prints the cluster figures: durable write
// throughput from 8 HTTP clients and task_get / task_list latency with one,
// two and three `cairn serve --http` servers on one PostgreSQL database,
// each beside the same figure of one server on its bbolt files, measured in
// the same run (the "floor" column).
func BenchmarkClusterScaling(b *testing.B) {
	if _, err := pgtest.Binaries(); err != nil {
		b.Skip(err)
	}
	for range b.N {
		tab := &table{}
		base := benchCluster(b, 1, "", nil)
		for _, servers := range []int{1, 2, 3} {
			f := benchCluster(b, servers, pgtest.DSN(b), nil)
			label := fmt.Sprintf("postgres, %d server", servers)
			if servers > 1 {
				label += "s"
			}
			note := "floor: 1 server on bbolt, same run"
			tab.add(row{name: "task_create, 8 clients, " + label, figure: f.createRate, floor: base.createRate, unit: "/s", note: note})
			tab.add(row{name: "thought_record, 8 clients, " + label, figure: f.thoughtRate, floor: base.thoughtRate, unit: "/s", note: note})
			tab.add(row{name: "task_get, " + label, figure: ms(f.get.quantile(0.5)), floor: ms(base.get.quantile(0.5)), unit: "ms", p99: ms(f.get.quantile(0.99)), note: note + fmt.Sprintf("; n=%d", len(f.get))})
			tab.add(row{name: "task_list first page, " + label, figure: ms(f.list.quantile(0.5)), floor: ms(base.list.quantile(0.5)), unit: "ms", p99: ms(f.list.quantile(0.99)), note: note + fmt.Sprintf("; n=%d", len(f.list))})
		}
		fmt.Printf("\nbbolt, 1 server: task_create %.0f/s, thought_record %.0f/s, task_get p50 %.3g ms, task_list p50 %.3g ms\n",
			base.createRate, base.thoughtRate, ms(base.get.quantile(0.5)), ms(base.list.quantile(0.5)))
		tab.print()
	}
}

type clusterFigures struct {
	createRate, thoughtRate float64
	// createNote and thoughtNote say what a call cost, when the caller
	// probes (createProbe).
	createNote, thoughtNote string
	get, list               samples
}

// benchCluster starts servers `cairn serve --http --no-auth` (on dsn, or
// one on bbolt when dsn is empty), runs the write and read phases through
// them and stops them. probe, when not nil, measures each write phase.
func benchCluster(b *testing.B, servers int, dsn string, probe *createProbe) clusterFigures {
	const clients = 8
	const phase = 3 * time.Second
	env := []string{"CAIRN_TOOLSETS=core", "CAIRN_PROJECT=proj-0"}
	if dsn != "" {
		env = append(env, "CAIRN_STORE="+dsn)
	}
	nodes := make([]*clusterNode, servers)
	for i := range nodes {
		nodes[i] = newClusterNode(b, benchWorkspace(b), env, "--no-auth")
		nodes[i].start()
	}
	defer func() {
		for _, n := range nodes {
			n.stop(syscall.SIGTERM)
		}
	}()
	ctx := context.Background()
	agents := make([]*clusterClient, clients)
	for i := range agents {
		agents[i] = &clusterClient{name: fmt.Sprintf("bench-%d", i), nodes: nodes, at: i % servers}
		defer agents[i].close()
	}
	callOK := func(a *clusterClient, name string, args map[string]any) (map[string]any, error) {
		res, err := a.call(ctx, name, args)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("%s: %v", name, res.StructuredContent)
		}
		return structured(&testing.T{}, res), nil
	}
	// One task per client for its thoughts, and every client connected.
	own := make([]string, clients)
	for i, a := range agents {
		out, err := callOK(a, "task_create", map[string]any{"title": "thoughts of " + a.name})
		if err != nil {
			b.Fatal(err)
		}
		own[i], _ = out["task_id"].(string)
	}
	rate := func(step func(i int, a *clusterClient, n int64) error) float64 {
		r, _ := runFor(b, len(agents), phase, func(i int, n int64) error { return step(i, agents[i], n) })
		return r
	}
	var f clusterFigures
	var ids []string
	var idsMu sync.Mutex
	probe.begin(nodes)
	f.createRate = rate(func(_ int, a *clusterClient, n int64) error {
		out, err := callOK(a, "task_create", map[string]any{"title": fmt.Sprintf("task %d", n), "labels": []string{"bench"}})
		if err == nil {
			idsMu.Lock()
			ids = append(ids, out["task_id"].(string))
			idsMu.Unlock()
		}
		return err
	})
	f.createNote = probe.end(len(ids))
	var thoughts atomic.Int64
	probe.begin(nodes)
	f.thoughtRate = rate(func(i int, a *clusterClient, n int64) error {
		_, err := callOK(a, "thought_record", map[string]any{"task_id": own[i], "type": "reflection", "content": fmt.Sprintf("thought %d", n)})
		if err == nil {
			thoughts.Add(1)
		}
		return err
	})
	f.thoughtNote = probe.end(int(thoughts.Load()))
	// Reads: one client at a time, turn by turn over the servers.
	for start, i := time.Now(), 0; time.Since(start) < phase || i < 200; i++ {
		a := agents[i%servers]
		t0 := time.Now()
		if _, err := callOK(a, "task_get", map[string]any{"task_id": ids[(i*7919)%len(ids)]}); err != nil {
			b.Fatal(err)
		}
		f.get = append(f.get, time.Since(t0))
		t0 = time.Now()
		if _, err := callOK(a, "task_list", map[string]any{"project": "proj-0", "limit": 50}); err != nil {
			b.Fatal(err)
		}
		f.list = append(f.list, time.Since(t0))
	}
	return f
}
