package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/cairn-mcp/cairn/host/events"
	"github.com/cairn-mcp/cairn/host/pipeline"
	"github.com/cairn-mcp/cairn/host/systemtools"
	"github.com/cairn-mcp/cairn/sdk/errs"
	"github.com/cairn-mcp/cairn/sdk/seam"
)

// recorder is a backend with no areas behind it: every tool call is
// refused as unavailable, and recorded, so a test sees who called what.
type recorder struct {
	bus   *events.Bus
	mu    sync.Mutex
	calls []seam.Caller
	names []string
}

func newRecorder() *recorder { return &recorder{bus: events.New(hclog.NewNullLogger())} }

func (r *recorder) Call(_ context.Context, name string, _ json.RawMessage, c seam.Caller) *seam.Result {
	r.mu.Lock()
	r.calls, r.names = append(r.calls, c), append(r.names, name)
	r.mu.Unlock()
	return pipeline.Fail(errs.New(503, errs.Unavailable, "no area runs in this test"))
}

// reset forgets the calls so far (a login's landing reads task_list).
func (r *recorder) reset() {
	r.mu.Lock()
	r.calls, r.names = nil, nil
	r.mu.Unlock()
}

func (r *recorder) CallInternal(ctx context.Context, name string, args json.RawMessage, c seam.Caller) *seam.Result {
	return r.Call(ctx, name, args, c)
}
func (r *recorder) Bus() *events.Bus { return r.bus }
func (r *recorder) Health(context.Context) systemtools.HealthOutput {
	return systemtools.HealthOutput{Status: "ok"}
}

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

// bearerTransport sends a session secret in every request's Authorization
// header, as the page does.
type bearerTransport struct{ session string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.session)
	return http.DefaultTransport.RoundTrip(r)
}

// exchange posts a login URL's token to /api/login as the login page does,
// with the given Origin ("" for none).
func exchange(t *testing.T, s *Server, loginURL, origin string) (int, loginOutput) {
	t.Helper()
	u, err := url.Parse(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(loginInput{Token: u.Query().Get("token")})
	req, _ := http.NewRequest("POST", base(s)+"/api/login", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out loginOutput
	_ = json.NewDecoder(res.Body).Decode(&out)
	if len(res.Cookies()) != 0 {
		t.Errorf("the login exchange set cookies %v", res.Cookies())
	}
	return res.StatusCode, out
}

// loginSession logs in with a fresh token and returns the session secret.
func loginSession(t *testing.T, s *Server, g Grant) string {
	t.Helper()
	code, out := exchange(t, s, s.LoginURL(g), base(s))
	if code != 200 || out.Session == "" {
		t.Fatalf("login: %d %+v", code, out)
	}
	return out.Session
}

// login returns a client that sends a fresh login's session secret.
func login(t *testing.T, s *Server, g Grant) *http.Client {
	t.Helper()
	return &http.Client{Transport: bearerTransport{loginSession(t, s, g)}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func shellPage(t *testing.T) []byte {
	t.Helper()
	b, err := templateFS.ReadFile("templates/shell.html")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoginExchangesTheTokenOnceForASession(t *testing.T) {
	s, _ := startTest(t, Config{})
	u := s.LoginURL(Grant{Person: "alice", Project: "web"})
	// Opening the URL answers the static page and spends nothing; it
	// expires the cookie earlier versions set.
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Equal(body, shellPage(t)) {
		t.Fatalf("GET %s: %d %s, want the static page", u, res.StatusCode, body)
	}
	if ck := res.Cookies(); len(ck) != 1 || ck[0].Name != "cairn_ui_"+s.Port() || ck[0].MaxAge >= 0 {
		t.Fatalf("cookies %+v, want only the old session cookie expired", ck)
	}
	// The exchange needs this dashboard's own Origin, exactly.
	for _, o := range []string{"", "http://127.0.0.1:1", "http://attacker.example", "null"} {
		if code, out := exchange(t, s, u, o); code != 403 || out.Session != "" {
			t.Fatalf("exchange with Origin %q: %d %+v, want 403", o, code, out)
		}
	}
	code, out := exchange(t, s, u, base(s))
	if code != 200 || out.Person != "alice" || out.Actions || out.Home != "/board?project=web" {
		t.Fatalf("exchange: %d %+v", code, out)
	}
	g, ok := openSession(s.secret, out.Session, time.Now())
	if !ok || g.Person != "alice" || time.Until(time.Unix(g.Expires, 0)) > SessionTTL {
		t.Fatalf("session %q opens to %+v %v", out.Session, g, ok)
	}
	if code, out := exchange(t, s, u, base(s)); code != 401 || out.Session != "" {
		t.Fatalf("second use of a token: %d %+v, want 401", code, out)
	}
}

// serve runs one request through the handler in this goroutine, so a test
// may move the server's clock.
func serve(s *Server, req *http.Request) *httptest.ResponseRecorder {
	req.Host = "127.0.0.1:" + s.port
	rw := httptest.NewRecorder()
	s.Handler().ServeHTTP(rw, req)
	return rw
}

func TestTokensAndSessionsExpire(t *testing.T) {
	s, _ := startTest(t, Config{})
	start := time.Now()
	s.now = func() time.Time { return start }
	tok, _ := url.Parse(s.LoginURL(Grant{Person: "alice"}))
	post := func() int {
		req := httptest.NewRequest("POST", "/api/login", strings.NewReader(`{"token":"`+tok.Query().Get("token")+`"}`))
		req.Header.Set("Origin", base(s))
		return serve(s, req).Code
	}
	s.now = func() time.Time { return start.Add(TokenTTL + time.Second) }
	if code := post(); code != 401 {
		t.Fatalf("an expired token: %d, want 401", code)
	}
	s.now = func() time.Time { return start }
	if code := post(); code != 401 {
		t.Fatalf("a token refused once: %d, want 401 for good", code)
	}
	sess := sealSession(s.secret, Grant{Person: "alice", Expires: start.Add(SessionTTL).Unix()})
	view := func() int {
		req := httptest.NewRequest("GET", "/view/board", nil)
		req.Header.Set("Authorization", "Bearer "+sess)
		return serve(s, req).Code
	}
	if code := view(); code != 200 {
		t.Fatalf("a fresh session: %d, want 200", code)
	}
	s.now = func() time.Time { return start.Add(SessionTTL + time.Second) }
	if code := view(); code != 401 {
		t.Fatalf("an expired session: %d, want 401", code)
	}
}

// What a server on another loopback port receives from the person's
// browser is its cookies for 127.0.0.1, whatever they are. Even a cookie
// holding a valid session secret, under any name, opens nothing: reads,
// the stream, downloads and actions all want the Authorization header,
// which only the dashboard's own pages can send.
func TestACookieAloneOpensNothing(t *testing.T) {
	s, rec := startTest(t, Config{})
	sess := loginSession(t, s, Grant{Person: "alice", AllowActions: true})
	rec.reset()
	cookie := strings.Join([]string{"cairn_ui_" + s.Port() + "=" + sess, "session=" + sess, "Authorization=Bearer " + sess}, "; ")
	paths := []struct{ method, path string }{
		{"GET", "/view/board"}, {"GET", "/view/task/T-1"}, {"GET", "/view/audits"}, {"GET", "/view/audits/A-1"},
		{"GET", "/view/sdd"}, {"GET", "/view/system"}, {"GET", "/api/tasks?status=todo"}, {"GET", "/events"},
		{"GET", "/api/audits/A-1/bundle"}, {"POST", "/api/audits/verify"}, {"POST", "/api/task/T-1/action"},
		{"POST", "/api/tasks"}, {"POST", "/api/task/T-1/edit"}, {"GET", "/view/graph?project=p"}, {"GET", "/view/burnup?project=p"},
		{"GET", "/view/approvals"}, {"GET", "/api/approvals/count"}, {"POST", "/api/task/T-1/approve"},
		{"GET", "/graph"}, {"GET", "/burnup"}, {"GET", "/approvals"}, {"GET", "/board"}, {"GET", "/system"}, {"GET", "/task/T-1"}, {"GET", "/"},
	}
	for _, p := range paths {
		req, _ := http.NewRequest(p.method, base(s)+p.path, strings.NewReader(`{"action":"comment","content":"from another origin"}`))
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Origin", base(s)) // forged, as curl can
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
		res.Body.Close()
		switch {
		case strings.HasPrefix(p.path, "/view/") || strings.HasPrefix(p.path, "/api/") || p.path == "/events":
			if res.StatusCode != 401 {
				t.Errorf("%s %s with the cookie alone: %d %s, want 401", p.method, p.path, res.StatusCode, body)
			}
		default: // a page address: the static page, the same for everyone
			if res.StatusCode != 200 || !bytes.Equal(body, shellPage(t)) {
				t.Errorf("%s %s with the cookie alone: %d %s, want the static page", p.method, p.path, res.StatusCode, body)
			}
		}
	}
	rec.mu.Lock()
	if len(rec.names) != 0 {
		t.Errorf("the cookie alone reached tools %v", rec.names)
	}
	rec.mu.Unlock()
	// The same secret in the header opens the pages.
	req, _ := http.NewRequest("GET", base(s)+"/view/system", nil)
	req.Header.Set("Authorization", "Bearer "+sess)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.Contains(body, []byte("alice")) {
		t.Fatalf("the header: %d %s", res.StatusCode, body)
	}
}

func TestGuardRefusals(t *testing.T) {
	s, rec := startTest(t, Config{})
	c := login(t, s, Grant{Person: "alice", AllowActions: true})
	rec.reset()
	port := s.Port()
	for _, tc := range []struct {
		name, method, path, host, origin string
		session                          bool
		header                           map[string]string
		want                             int
	}{
		{"no session view", "GET", "/view/board", "", "", false, nil, 401},
		{"no session api", "GET", "/api/tasks", "", "", false, nil, 401},
		{"no session events", "GET", "/events", "", "", false, nil, 401},
		{"no session bundle", "GET", "/api/audits/A-1/bundle", "", "", false, nil, 401},
		{"no session verify", "POST", "/api/audits/verify", "", "http://127.0.0.1:" + port, false, nil, 401},
		{"no session action", "POST", "/api/task/T-1/action", "", "http://127.0.0.1:" + port, false, nil, 401},
		{"a bad session", "GET", "/view/board", "", "", false, map[string]string{"Authorization": "Bearer e30.AAAA"}, 401},
		{"session", "GET", "/view/board", "", "", true, nil, 200},
		{"page address needs none", "GET", "/board", "", "", false, nil, 200},
		{"assets need none", "GET", "/assets/style.css", "", "", false, nil, 200},
		{"rebinding host", "GET", "/view/board", "attacker.example:" + port, "", true, nil, 421},
		{"rebinding host, page", "GET", "/board", "attacker.example:" + port, "", false, nil, 421},
		{"another port", "GET", "/view/board", "127.0.0.1:1", "", true, nil, 421},
		{"localhost", "GET", "/assets/app.js", "localhost:" + port, "", false, nil, 200},
		{"foreign origin read", "GET", "/api/tasks", "", "http://attacker.example", true, nil, 403},
		{"another port's origin read", "GET", "/view/system", "", "http://127.0.0.1:1", true, nil, 403},
		{"same-site fetch", "GET", "/view/system", "", "", true, map[string]string{"Sec-Fetch-Site": "same-site"}, 403},
		{"foreign origin write", "POST", "/api/task/T-1/action", "", "http://attacker.example", true, nil, 403},
		{"another port's origin write", "POST", "/api/task/T-1/action", "", "http://127.0.0.1:1", true, nil, 403},
		{"https origin write", "POST", "/api/task/T-1/action", "", "https://127.0.0.1:" + port, true, nil, 403},
		{"write without origin", "POST", "/api/task/T-1/action", "", "", true, nil, 403},
		{"preflight", "OPTIONS", "/api/task/T-1/action", "", "http://127.0.0.1:1", false, map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}, 403},
		{"same origin write", "POST", "/api/task/T-1/action", "", "http://127.0.0.1:" + port, true, nil, 503},
		{"unknown token", "POST", "/api/login", "", "http://127.0.0.1:" + port, false, nil, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base(s)+tc.path, strings.NewReader(`{"action":"comment","content":"hi"}`))
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			client := http.DefaultClient
			if tc.session {
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
			for k := range res.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Fatalf("answered %s: the dashboard grants no cross-origin access", k)
				}
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
	rec.reset()
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
	res, err := c.Get(base(s2) + "/view/board")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("session after a restart: %d, want 200", res.StatusCode)
	}
}
