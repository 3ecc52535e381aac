package httpserve

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgmigrate"
	"github.com/cairn-mcp/cairn/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// testArea's one step makes the session table, as the host's migrations do
// (cluster.HostMigrations).
const testArea = "http-test"

var testMigrations = []pgmigrate.Step{{Version: 1, Name: "shared http sessions", SQL: SessionsSchema}}

// twoServers are the session tables of two servers on one database.
func twoServers(t *testing.T, idle time.Duration) (a, b *httpSessions) {
	t.Helper()
	ctx := context.Background()
	pool, err := pgmigrate.Connect(ctx, pgtest.DSN(t), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pgmigrate.Apply(ctx, pool, testArea, testMigrations); err != nil {
		t.Fatal(err)
	}
	a, b = newHTTPSessions(idle, 1), newHTTPSessions(idle, 1)
	a.shared = &sharedSessions{pool: pool, idle: idle}
	b.shared = &sharedSessions{pool: pool, idle: idle}
	return a, b
}

func TestSharedSessionsContinueOnAnotherServer(t *testing.T) {
	t.Parallel()
	a, b := twoServers(t, time.Minute)
	id := a.open("key:alice")
	if _, err := b.use(id, "key:alice"); !errors.Is(err, errNoSession) {
		t.Fatalf("a session never initialized continues elsewhere: %v", err)
	}
	a.recordInitialize(id, requestWithBody(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"agent","version":"1"},"capabilities":{}}}`))
	onA, err := a.use(id, "key:alice")
	if err != nil {
		t.Fatal(err)
	}
	a.record(id, onA, "logging/setLevel", []byte(`{"params":{"level":"debug"}}`))
	for _, uri := range []string{"cairn://tasks/T-1", "cairn://trail/T-1", "cairn://tasks/T-1"} {
		a.record(id, onA, "resources/subscribe", []byte(`{"params":{"uri":"`+uri+`"}}`))
	}
	a.record(id, onA, "resources/unsubscribe", []byte(`{"params":{"uri":"cairn://trail/T-1"}}`))
	// a's copy already holds what was done on a: nothing to catch up.
	if m := &onA.mirror; !m.here || m.logLevel != "debug" || !slices.Equal(m.subs, []string{"cairn://tasks/T-1"}) {
		t.Fatalf("a's mirror after its own requests: here %v, level %q, subs %v", m.here, m.logLevel, m.subs)
	}

	if _, err := b.use(id, "key:bob"); !errors.Is(err, errNoSession) {
		t.Fatalf("another key's use on server b: %v, want no such session", err)
	}
	sess, st, err := b.useState(id, "key:alice")
	if err != nil {
		t.Fatal(err)
	}
	if st == nil || st.LogLevel != "debug" || !slices.Equal(st.Subscriptions, []string{"cairn://tasks/T-1"}) || !strings.Contains(string(st.Initialize), `"agent"`) {
		t.Fatalf("shared state on b = %+v", st)
	}
	if sess.mirror.here {
		t.Fatal("b's copy claims mcp-go holds a session b never served")
	}
	if again, _ := b.use(id, "key:alice"); again != sess {
		t.Fatal("a second request made another copy on b")
	}

	// mcp-go's idle sweep or shutdown on a ends a's copy only.
	a.ResolveSessionIdManager(nil).Terminate(id)
	if _, err := b.use(id, "key:alice"); err != nil {
		t.Fatalf("a server's shutdown ended the session everywhere: %v", err)
	}
	// DELETE through b ends it on a too.
	b.end(id)
	if _, err := a.use(id, "key:alice"); !errors.Is(err, errNoSession) {
		t.Fatalf("server a after DELETE on b: %v", err)
	}
}

func TestSharedSessionsExpireWhenIdleEverywhere(t *testing.T) {
	t.Parallel()
	// The uses come a quarter of the limit apart, so a loaded machine has
	// three quarters of it to spare for each (docs/decisions.md D42).
	const idle = 3 * time.Second
	a, b := twoServers(t, idle)
	id := a.open("")
	a.recordInitialize(id, requestWithBody(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	// Used through b, the session stays alive on a although a saw nothing:
	// the uses span more than the idle limit. The limit is measured by
	// PostgreSQL's clock (now() in the statements), so real time passes.
	for range 5 {
		time.Sleep(idle / 4)
		if _, err := b.use(id, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.use(id, ""); err != nil {
		t.Fatalf("a session used through b within the idle limit expired on a: %v", err)
	}
	time.Sleep(idle + idle/10)
	for name, s := range map[string]*httpSessions{"a": a, "b": b} {
		if _, err := s.use(id, ""); !errors.Is(err, errNoSession) {
			t.Errorf("server %s after the idle limit: %v", name, err)
		}
	}
}

// requestWithBody is a POST whose body boundBody has read.
func requestWithBody(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	return r.WithContext(context.WithValue(r.Context(), httpBodyKey{}, []byte(body)))
}

// BenchmarkSessionCheck is the check every request of a 2025-11-25 HTTP
// session pays: in memory on one server, one UPDATE … RETURNING on a
// cluster. Their ratio is the price of sessions that survive their server.
func BenchmarkSessionCheck(b *testing.B) {
	for _, name := range []string{"single", "cluster"} {
		b.Run(name, func(b *testing.B) {
			s := newHTTPSessions(time.Minute, 1)
			if name == "cluster" {
				pool, err := pgmigrate.Connect(context.Background(), pgtest.DSN(b), 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				if _, err := pgmigrate.Apply(context.Background(), pool, testArea, testMigrations); err != nil {
					b.Fatal(err)
				}
				s.shared = &sharedSessions{pool: pool, idle: time.Minute}
			}
			id := s.open("key:k")
			b.ResetTimer()
			for range b.N {
				if _, err := s.use(id, "key:k"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A request moves a session's last_seen only when it is older than
// touchEvery, so most requests write nothing; a stale one is moved.
func TestSharedSessionTouchWritesOnlyWhenStale(t *testing.T) {
	t.Parallel()
	a, _ := twoServers(t, 10*time.Second) // touchEvery: 1 s
	id := a.open("")
	a.recordInitialize(id, requestWithBody(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	ctx := context.Background()
	lastSeen := func() time.Time {
		var at time.Time
		if err := a.shared.pool.QueryRow(ctx, "SELECT last_seen FROM cairn_http_sessions WHERE id = $1", id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	before := lastSeen()
	if _, err := a.use(id, ""); err != nil {
		t.Fatal(err)
	}
	if got := lastSeen(); !got.Equal(before) {
		t.Errorf("a fresh session's last_seen moved on use: %v → %v", before, got)
	}
	if _, err := a.shared.pool.Exec(ctx, "UPDATE cairn_http_sessions SET last_seen = now() - interval '2 seconds' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
	stale := lastSeen()
	if _, err := a.use(id, ""); err != nil {
		t.Fatal(err)
	}
	if got := lastSeen(); !got.After(stale.Add(time.Second)) {
		t.Errorf("a stale last_seen was not moved on use: %v → %v", stale, got)
	}
}
