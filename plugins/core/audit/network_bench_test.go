package audit

import (
	"fmt"
	"github.com/cairn-mcp/cairn/sdk/idempotency"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/core/tasks"
)

// networkRTT is the round trip the servers of BenchmarkServersOverANetwork
// have to their database: servers and database on different hosts of one
// data centre.
const networkRTT = time.Millisecond

// BenchmarkServersOverANetwork measures what docs/decisions.md D40 is
// for: one, two and three servers, each with eight writers, writing to one
// PostgreSQL database across a network round trip of networkRTT
// (pgtest.Delayed). Writes that waited for each other across servers would
// add up to the same throughput whatever the number of servers; writes
// that run beside each other's grow with them, until the database or this
// machine's CPU is the limit. The floor of each figure is the one-server
// figure of the same run.
func BenchmarkServersOverANetwork(b *testing.B) {
	const writers, phase = 8, 3 * time.Second
	for range b.N {
		var one [2]float64
		fmt.Fprintf(os.Stderr, "\n| Servers, %d writers each, RTT %v | task_create /s | × one server | thought_record /s | × one server | shared commits, conflicts run again, runs alone |\n|---|---|---|---|---|---|\n", writers, networkRTT)
		for _, n := range []int{1, 2, 3} {
			dsn := pgtest.Delayed(b, pgtest.DSN(b), networkRTT/2)
			var servers []server
			for range n {
				servers = append(servers, openServer(b, dsn))
			}
			if _, err := servers[0].tasks.AddProject("demo"); err != nil {
				b.Fatal(err)
			}
			var ids []string
			for i := range n * writers {
				out, err := servers[i%n].tasks.Create("seed", tasks.CreateInput{Title: "seed", Project: "demo"})
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, out.TaskID)
			}
			creates := runPhase(b, servers, writers, phase, func(s server, who string, i int) error {
				_, err := s.tasks.CreateFor(tasks.Call{Actor: who, Idem: idempotency.Key{Key: fmt.Sprint(who, "/", i)}}, tasks.CreateInput{Title: fmt.Sprint(who, " ", i), Project: "demo"})
				return err
			})
			thoughts := runPhase(b, servers, writers, phase, func(s server, who string, i int) error {
				// Each writer records on a task of its own, as agents do.
				var w int
				_, _ = fmt.Sscanf(who, "w%d", &w)
				_, err := s.audit.RecordOnce(who, idempotency.Key{Key: fmt.Sprint(who, "/t", i)}, "", RecordInput{TaskID: ids[w], Type: "reflection", Content: who})
				return err
			})
			if n == 1 {
				one = [2]float64{creates, thoughts}
			}
			var st [3]uint64
			for _, s := range servers {
				x := s.tasks.Store().SharedStats()
				st[0], st[1], st[2] = st[0]+x.Committed, st[1]+x.Conflicts, st[2]+x.Alone
			}
			fmt.Fprintf(os.Stderr, "| %d | %.0f | %.2f | %.0f | %.2f | %d, %d, %d |\n", n, creates, creates/one[0], thoughts, thoughts/one[1], st[0], st[1], st[2])
			b.ReportMetric(creates, fmt.Sprintf("creates/s@%d", n))
		}
	}
}

// runPhase runs writers writers on every server for d and returns the
// calls per second that succeeded; a failed call fails the benchmark.
func runPhase(b *testing.B, servers []server, writers int, d time.Duration, call func(s server, who string, i int) error) float64 {
	var done atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for si, s := range servers {
		for w := range writers {
			wg.Add(1)
			go func(who string) {
				defer wg.Done()
				for i := 0; time.Now().Before(stop); i++ {
					if err := call(s, who, i); err != nil {
						b.Error(err)
						return
					}
					done.Add(1)
				}
			}(fmt.Sprintf("w%d-s%d", si*writers+w, si))
		}
	}
	wg.Wait()
	return float64(done.Load()) / d.Seconds()
}
