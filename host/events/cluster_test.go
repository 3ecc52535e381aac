package events

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// clusterDB is a fresh database with the bus table.
func clusterDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgmigrate.Connect(ctx, pgtest.DSN(t), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pgmigrate.Apply(ctx, pool, "host", []pgmigrate.Step{{Version: 1, Name: "bus", SQL: BusSchema}}); err != nil {
		t.Fatal(err)
	}
	return pool
}

func joined(t testing.TB, pool *pgxpool.Pool, opts ClusterOptions) (*Bus, *Cluster) {
	t.Helper()
	b := newBus()
	c, err := JoinCluster(context.Background(), b, pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Leave)
	return b, c
}

// recorder keeps every event a handler received, in order.
type recorder struct {
	mu  sync.Mutex
	got []Event
}

func (r *recorder) handle(ev Event) {
	r.mu.Lock()
	r.got = append(r.got, ev)
	r.mu.Unlock()
}

// handleLocal is handle as a local (plugin) subscriber's handler.
func (r *recorder) handleLocal(ev Event) error {
	r.handle(ev)
	return nil
}

func (r *recorder) snapshot() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.got...)
}

func countIDs(t *testing.T, evs []Event) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.ID]++
		if n[ev.ID] > 1 {
			t.Errorf("event %s (%s) delivered %d times", ev.ID, ev.Type, n[ev.ID])
		}
	}
	return n
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestClusterDeliversRemoteEventsOnceToSessionsNeverToPlugins(t *testing.T) {
	pool := clusterDB(t)
	a, ca := joined(t, pool, ClusterOptions{Server: "a"})
	b, cb := joined(t, pool, ClusterOptions{Server: "b"})

	var aSessions, bSessions, aPlugins, bPlugins recorder
	defer a.Subscribe("session", "*", aSessions.handle)()
	defer b.Subscribe("session", "*", bSessions.handle)()
	defer a.SubscribeLocalBatch("plugin", []string{"*", "task.*"}, oneByOne(aPlugins.handleLocal))()
	defer b.SubscribeLocalBatch("plugin", []string{"*", "task.*"}, oneByOne(bPlugins.handleLocal))()

	const fromA, fromB = 50, 7
	for i := range fromA {
		a.Publish(Event{Type: "task.created", Source: "core", Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	for range fromB {
		b.Publish(Event{Type: "webhook.created", Source: "admin"})
	}
	waitFor(t, "every event on both servers' sessions", func() bool {
		return len(aSessions.snapshot()) == fromA+fromB && len(bSessions.snapshot()) == fromA+fromB
	})
	// Nothing further arrives: give a late duplicate the time to show.
	time.Sleep(300 * time.Millisecond)

	for name, got := range map[string][]Event{"a sessions": aSessions.snapshot(), "b sessions": bSessions.snapshot()} {
		if len(got) != fromA+fromB {
			t.Errorf("%s received %d events, want %d", name, len(got), fromA+fromB)
		}
		countIDs(t, got)
	}
	remote := 0
	for _, ev := range bSessions.snapshot() {
		if ev.Type == "task.created" {
			if ev.Origin != "a" {
				t.Errorf("event from a arrived on b with origin %q", ev.Origin)
			}
			remote++
		} else if ev.Origin != "" {
			t.Errorf("b's own event arrived with origin %q", ev.Origin)
		}
	}
	if remote != fromA {
		t.Errorf("b's session heard %d of a's events, want %d", remote, fromA)
	}
	// Order is kept: a's events reach b in the order a published them.
	n := 0
	for _, ev := range bSessions.snapshot() {
		if ev.Type != "task.created" {
			continue
		}
		if want := fmt.Sprintf(`{"n":%d}`, n); string(ev.Data) != want {
			t.Fatalf("b heard a's event %d as %s, want %s", n, ev.Data, want)
		}
		n++
	}
	for name, c := range map[string]struct {
		got  []Event
		want int
		typ  string
	}{"a plugins": {aPlugins.snapshot(), fromA, "task.created"}, "b plugins": {bPlugins.snapshot(), fromB, "webhook.created"}} {
		if len(c.got) != c.want {
			t.Errorf("%s received %d events, want only their own server's %d", name, len(c.got), c.want)
		}
		for _, ev := range c.got {
			if ev.Type != c.typ || ev.Origin != "" {
				t.Errorf("%s received %s from %q", name, ev.Type, ev.Origin)
			}
		}
		countIDs(t, c.got)
	}
	if st := ca.Stats(); st.EventsOut != fromA || st.EventsIn != fromB || !st.Connected {
		t.Errorf("a's stats = %+v, want %d out, %d in, connected", st, fromA, fromB)
	}
	if st := cb.Stats(); st.EventsOut != fromB || st.EventsIn != fromA {
		t.Errorf("b's stats = %+v, want %d out, %d in", st, fromB, fromA)
	}
}

func TestClusterLosesNothingAcrossADroppedListener(t *testing.T) {
	pool := clusterDB(t)
	a, _ := joined(t, pool, ClusterOptions{Server: "a"})
	// No polling: only the listener's wake-ups, and its catch-up after a
	// reconnect, bring b the events.
	b, cb := joined(t, pool, ClusterOptions{Server: "b", Poll: time.Hour})
	var got recorder
	defer b.Subscribe("session", "*", got.handle)()
	waitFor(t, "b's listener", func() bool { return cb.Stats().Connected })

	ctx := context.Background()
	var killed int
	if err := pool.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", ListenerName("b")).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listener connections (%v), want 1", killed, err)
	}
	const n = 40
	for range n {
		a.Publish(Event{Type: "task.updated", Source: "core"})
	}
	waitFor(t, "every event after the listener came back", func() bool { return len(got.snapshot()) == n })
	time.Sleep(200 * time.Millisecond)
	countIDs(t, got.snapshot())
	if len(got.snapshot()) != n {
		t.Errorf("b heard %d events, want %d", len(got.snapshot()), n)
	}
	st := cb.Stats()
	if st.LastError == "" {
		t.Errorf("stats after a dropped listener name no error: %+v", st)
	}
	waitFor(t, "b's listener reconnected", func() bool { return cb.Stats().Connected })
}

func TestClusterStartsAtTheEndAndExpiresOldRows(t *testing.T) {
	pool := clusterDB(t)
	a, _ := joined(t, pool, ClusterOptions{Server: "a", Retention: time.Second})
	a.Publish(Event{Type: "task.created", Source: "core"})
	ctx := context.Background()
	rows := func() int {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM cairn_bus_events").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor(t, "the event's row", func() bool { return rows() == 1 })

	// A server joining later hears what is published from then on, not
	// the history.
	b, _ := joined(t, pool, ClusterOptions{Server: "b", Poll: 50 * time.Millisecond})
	var got recorder
	defer b.Subscribe("session", "*", got.handle)()
	a.Publish(Event{Type: "task.updated", Source: "core"})
	waitFor(t, "the new event on b", func() bool { return len(got.snapshot()) == 1 })
	if ev := got.snapshot()[0]; ev.Type != "task.updated" {
		t.Errorf("b heard %s first, want the event published after it joined", ev.Type)
	}
	waitFor(t, "rows older than the retention deleted", func() bool { return rows() == 0 })
}

func TestLeaveStopsForwarding(t *testing.T) {
	pool := clusterDB(t)
	a, ca := joined(t, pool, ClusterOptions{Server: "a"})
	ca.Leave()
	a.Publish(Event{Type: "task.created", Source: "core"})
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM cairn_bus_events").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d rows written after Leave, want 0", n)
	}
}

// BenchmarkClusterHop measures how long an event published on one server
// takes to reach a subscriber on another (INSERT, NOTIFY, LISTEN, SELECT),
// beside the floor of one bare round trip to the same database in the same
// run: hop/roundtrip is the ratio to watch.
func BenchmarkClusterHop(b *testing.B) {
	pool := clusterDB(b)
	a, _ := joined(b, pool, ClusterOptions{Server: "a"})
	other, _ := joined(b, pool, ClusterOptions{Server: "b"})
	got := make(chan struct{}, 1)
	defer other.Subscribe("bench", "bench.*", func(Event) { got <- struct{}{} })()
	ctx := context.Background()

	var floor time.Duration
	for range 200 {
		start := time.Now()
		if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
			b.Fatal(err)
		}
		floor += time.Since(start)
	}
	floor /= 200

	b.ResetTimer()
	start := time.Now()
	for range b.N {
		a.Publish(Event{Type: "bench.hop", Source: "bench"})
		<-got
	}
	hop := time.Since(start) / time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(floor.Microseconds()), "roundtrip-µs")
	b.ReportMetric(float64(hop)/float64(floor), "hop/roundtrip")
}
