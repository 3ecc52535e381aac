package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host"
	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// recorder is a backend with no areas behind it: every tool call is
// refused as unavailable, and recorded, so a test sees who called what.
type recorder struct {
	bus   *events.Bus
	mu    sync.Mutex
	calls []pipeline.Caller
	names []string
}

func newRecorder() *recorder { return &recorder{bus: events.New(hclog.NewNullLogger())} }

func (r *recorder) Call(_ context.Context, name string, _ json.RawMessage, c pipeline.Caller) *pipeline.Outcome {
	r.mu.Lock()
	r.calls, r.names = append(r.calls, c), append(r.names, name)
	r.mu.Unlock()
	return pipeline.Fail(errs.New(503, errs.Unavailable, "no area runs in this test"))
}
func (r *recorder) CallInternal(ctx context.Context, name string, args json.RawMessage, c pipeline.Caller) *pipeline.Outcome {
	return r.Call(ctx, name, args, c)
}
func (r *recorder) Bus() *events.Bus                         { return r.bus }
func (r *recorder) Health(context.Context) host.HealthOutput { return host.HealthOutput{Status: "ok"} }

func startTest(t *testing.T, cfg Config) (*Server, *recorder) {
	t.Helper()
	rec := newRecorder()
	cfg.DataDir = t.TempDir()
	s, err := Start(rec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s, rec
}

func base(s *Server) string { return "http://127.0.0.1:" + s.Port() }

// login exchanges a fresh token and returns a client holding the cookie.
func login(t *testing.T, s *Server, g Grant) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(s.LoginURL(g))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", res.StatusCode)
	}
	return c
}

func TestLoginSetsAStrictHttpOnlyCookieOnce(t *testing.T) {
	s, _ := startTest(t, Config{})
	u := s.LoginURL(Grant{Person: "alice", Project: "web"})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 303 || res.Header.Get("Location") != "/board?project=web" {
		t.Fatalf("login: %d to %q, want 303 to the project's board", res.StatusCode, res.Header.Get("Location"))
	}
	ck := res.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Name != "cairn_ui_"+s.Port() {
		t.Fatalf("cookie %+v, want one HttpOnly SameSite=Strict cookie named for the port", ck)
	}
	res, err = c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("second use of a token: %d, want 401", res.StatusCode)
	}
}

func TestGuardRefusals(t *testing.T) {
	s, rec := startTest(t, Config{})
	c := login(t, s, Grant{Person: "alice", AllowActions: true})
	port := s.Port()
	for _, tc := range []struct {
		name, method, path, host, origin string
		cookie                           bool
		want                             int
	}{
		{"no cookie page", "GET", "/board", "", "", false, 401},
		{"no cookie api", "GET", "/api/tasks", "", "", false, 401},
		{"no cookie events", "GET", "/events", "", "", false, 401},
		{"cookie", "GET", "/board", "", "", true, 200},
		{"assets need no cookie", "GET", "/assets/style.css", "", "", false, 200},
		{"rebinding host", "GET", "/board", "attacker.example:" + port, "", true, 421},
		{"another port", "GET", "/board", "127.0.0.1:1", "", true, 421},
		{"localhost", "GET", "/assets/app.js", "localhost:" + port, "", false, 200},
		{"foreign origin read", "GET", "/api/tasks", "", "http://attacker.example", true, 403},
		{"foreign origin write", "POST", "/api/task/T-1/action", "", "http://attacker.example", true, 403},
		{"write without origin", "POST", "/api/task/T-1/action", "", "", true, 403},
		{"same origin write", "POST", "/api/task/T-1/action", "", "http://127.0.0.1:" + port, true, 503},
		{"unknown token", "GET", "/login?token=nope", "", "", false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base(s)+tc.path, strings.NewReader(`{"action":"comment","content":"hi"}`))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			client := http.DefaultClient
			if tc.cookie {
				client = c
			}
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("%d, want %d", res.StatusCode, tc.want)
			}
		})
	}
	// Only the same-origin write reached a tool, as alice the person.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.names) != 1 || rec.names[0] != "thought_record" || rec.calls[0].ID != "alice" || rec.calls[0].Source != PersonSource {
		t.Fatalf("tool calls %v by %v, want one thought_record by alice", rec.names, rec.calls)
	}
}

func TestReadOnlyLoginCannotAct(t *testing.T) {
	s, rec := startTest(t, Config{})
	c := login(t, s, Grant{Person: "bob"})
	req, _ := http.NewRequest("POST", base(s)+"/api/task/T-1/action", strings.NewReader(`{"action":"comment","content":"hi"}`))
	req.Header.Set("Origin", base(s))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Error errs.Error `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	if res.StatusCode != 403 || out.Error.Code != errs.Forbidden || out.Error.Details["required"] != "allow-actions" {
		t.Fatalf("read-only action: %d %+v", res.StatusCode, out.Error)
	}
	if len(rec.names) != 0 {
		t.Fatalf("a read-only login reached tools %v", rec.names)
	}
}

func TestEventsStreamLiveTypesAndHoldTheDaemon(t *testing.T) {
	var mu sync.Mutex
	var holds, releases int
	s, rec := startTest(t, Config{KeepAlive: func() func() {
		mu.Lock()
		holds++
		mu.Unlock()
		return func() { mu.Lock(); releases++; mu.Unlock() }
	}})
	c := login(t, s, Grant{Person: "alice"})
	open := func() (*http.Response, *bufio.Reader, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", base(s)+"/events", nil)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(res.Body)
		if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "retry: ") {
			t.Fatalf("stream starts with %q, want a retry interval", line)
		}
		return res, r, cancel
	}
	res1, r1, cancel1 := open()
	_, _, cancel2 := open()
	// Wait until both streams subscribed, then publish.
	for {
		if _, _, n := rec.bus.Stats(); n == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec.bus.Publish(events.Event{Type: "plugin.restarted", Source: "host"})
	rec.bus.Publish(events.Event{Type: "task.created", Source: "core", Data: json.RawMessage(`{"task_id":"T-9","project":"web"}`)})
	var got []string
	for len(got) < 3 {
		line, err := r1.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event:") || strings.HasPrefix(line, "data:") || strings.HasPrefix(line, "id:") {
			got = append(got, strings.TrimSpace(line))
		}
	}
	if !strings.HasPrefix(got[0], "id: evt_") || got[1] != "event: change" || !strings.Contains(got[2], `"type":"task.created"`) || !strings.Contains(got[2], `"T-9"`) {
		t.Fatalf("stream sent %q, want only the task.created event", got)
	}
	cancel1()
	res1.Body.Close()
	cancel2()
	for {
		mu.Lock()
		h, r := holds, releases
		mu.Unlock()
		if r == 1 {
			if h != 1 {
				t.Fatalf("two pages took %d holds, want 1", h)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPortAndSessionsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	rec := newRecorder()
	s1, err := Start(rec, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := login(t, s1, Grant{Person: "alice"})
	port := s1.Port()
	s1.Stop()
	s2, err := Start(rec, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if s2.Port() != port {
		t.Fatalf("port %s after a restart, want %s", s2.Port(), port)
	}
	u, _ := url.Parse(base(s2) + "/board")
	if len(c.Jar.Cookies(u)) != 1 {
		t.Fatal("the client lost its cookie")
	}
	res, err := c.Get(base(s2) + "/board")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("cookie after a restart: %d, want 200", res.StatusCode)
	}
}
