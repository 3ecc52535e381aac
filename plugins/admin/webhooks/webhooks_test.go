package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/pgtest"
	"github.com/cairn-mcp/cairn/plugins/admin/store"
)

// receiver is a loopback endpoint that checks both signatures in constant
// time and fails the first `fail` requests with 503.
type receiver struct {
	srv      *httptest.Server
	secret   string
	fail     int32
	calls    atomic.Int32
	mu       sync.Mutex
	bodies   []map[string]any
	badSig   atomic.Int32
	attempts []string
}

func newReceiver(t testing.TB, fail int32) *receiver {
	r := &receiver{fail: fail}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.calls.Add(1)
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		secret := r.secret
		r.attempts = append(r.attempts, req.Header.Get("X-Cairn-Attempt"))
		r.mu.Unlock()
		ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		if !Verify(body, req.Header.Get("X-Cairn-Signature-256"), secret) ||
			!VerifyStandard(req.Header.Get("webhook-id"), ts, body, req.Header.Get("webhook-signature"), secret) {
			r.badSig.Add(1)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if n <= r.fail {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		r.mu.Lock()
		r.bodies = append(r.bodies, m)
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.OpenFor(dir, os.Getenv(store.SettingEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return nil
}

func devManager(t testing.TB, st *store.Store, extra ...func(*Options)) *Manager {
	o := Options{Development: true, Backoff: Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}}
	for _, f := range extra {
		f(&o)
	}
	return New(st, o)
}

func register(t testing.TB, m *Manager, r *receiver, events ...string) string {
	t.Helper()
	res, err := m.Register(context.Background(), RegisterOptions{URL: r.srv.URL + "/hook", EventTypes: events})
	if err != nil || !res.Success {
		t.Fatalf("register: %+v %v", res, err)
	}
	r.mu.Lock()
	r.secret = res.Webhook.Secret
	r.mu.Unlock()
	return res.Webhook.ID
}

func TestDeliverRetriesWithBackoffAndSignatures(t *testing.T) {
	pgtest.EachStore(t, testDeliverRetriesWithBackoffAndSignatures)
}

func testDeliverRetriesWithBackoffAndSignatures(t *testing.T) {
	st := openStore(t, t.TempDir())
	var sl sleeps
	m := devManager(t, st, func(o *Options) {
		o.Sleep = sl.sleep
		o.Backoff = Backoff{Base: 100 * time.Millisecond, Max: time.Second, Rand: func() float64 { return 0.5 }}
	})
	r := newReceiver(t, 2)
	id := register(t, m, r)
	w, _ := m.GetWebhook(id)
	res, err := m.Deliver(context.Background(), w, store.Event{ID: "evt_1", Type: "task.created", Time: "2026-11-22T00:00:00.000Z", Data: json.RawMessage(`{"task_id":"T-1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Attempts != 3 || res.StatusCode != 204 || r.badSig.Load() != 0 {
		t.Fatalf("deliver: %+v bad signatures %d", res, r.badSig.Load())
	}
	// Equal jitter at 0.5: 75 ms after the first failure, 150 ms after the second.
	if len(sl.d) != 2 || sl.d[0] != 75*time.Millisecond || sl.d[1] != 150*time.Millisecond {
		t.Fatalf("backoff %v", sl.d)
	}
	if strings.Join(r.attempts, ",") != "1,2,3" {
		t.Fatalf("attempt headers %v", r.attempts)
	}
	if r.bodies[0]["type"] != "task.created" || r.bodies[0]["data"].(map[string]any)["task_id"] != "T-1" {
		t.Fatalf("body %v", r.bodies[0])
	}
	hist, _ := m.GetDeliveryHistory(id, HistoryOptions{})
	w, _ = m.GetWebhook(id)
	if len(hist) != 1 || hist[0].Status != DeliveryDelivered || hist[0].Attempts != 3 || w.Stats.SuccessfulDeliveries != 1 {
		t.Fatalf("history %+v stats %+v", hist, w.Stats)
	}
	// A receiver with the wrong secret refuses: the signature really is checked.
	r.mu.Lock()
	r.secret = "whsec_c29tZXRoaW5nIGVsc2UgZW50aXJlbHk="
	r.mu.Unlock()
	res, _ = m.Deliver(context.Background(), w, store.Event{ID: "evt_2", Type: "task.created"})
	if res.Success || r.badSig.Load() == 0 {
		t.Fatalf("wrong secret accepted: %+v", res)
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 10 * time.Second, Rand: func() float64 { return 0.999999 }}
	prev := time.Duration(0)
	for n := 1; n <= 8; n++ {
		d := b.Delay(n)
		if d < prev || d > 10*time.Second {
			t.Fatalf("retry %d: %v after %v", n, d, prev)
		}
		prev = d
	}
	lo := Backoff{Base: time.Second, Max: time.Hour, Rand: func() float64 { return 0 }}
	if lo.Delay(3) != 2*time.Second {
		t.Fatalf("jitter floor %v", lo.Delay(3))
	}
}

func TestPersistedScheduleResumesAfterRestart(t *testing.T) {
	pgtest.EachStore(t, testPersistedScheduleResumesAfterRestart)
}

func testPersistedScheduleResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	r := newReceiver(t, 1)
	st1 := openStore(t, dir)
	m1 := devManager(t, st1)
	id := register(t, m1, r, "task.*")
	other := newReceiver(t, 0)
	register(t, m1, other, "member.added") // not subscribed to task.created
	res, err := m1.TriggerEvent(context.Background(), "task.created", map[string]any{"task_id": "T-9"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Triggered != 1 || res.Delivered != 0 || res.Pending != 1 {
		t.Fatalf("trigger: %+v", res)
	}
	// "Restart": the first store closed, a new one and a new manager on
	// the same data, nothing carried over in memory.
	st1.Close()
	m2 := devManager(t, openStore(t, dir))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := m2.ProcessDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		h, _ := m2.GetDeliveryHistory(id, HistoryOptions{})
		if len(h) == 1 && h[0].Status == DeliveryDelivered {
			if h[0].Attempts != 2 {
				t.Fatalf("attempts %d", h[0].Attempts)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not resumed: %+v", h)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if other.calls.Load() != 0 {
		t.Fatal("unsubscribed webhook got the event")
	}
	stats, _ := m2.GetDeliveryStats()
	if stats.Delivered != 1 || stats.Pending != 0 || stats.SuccessRate != 100 {
		t.Fatalf("stats %+v", stats)
	}
}

func TestRunDeliversEmittedEventsAndGivesUp(t *testing.T) {
	pgtest.EachStore(t, testRunDeliversEmittedEventsAndGivesUp)
}

func testRunDeliversEmittedEventsAndGivesUp(t *testing.T) {
	st := openStore(t, t.TempDir())
	m := devManager(t, st, func(o *Options) { o.PollInterval = 10 * time.Millisecond })
	r := newReceiver(t, 1000)
	id := register(t, m, r)
	_, _ = m.UpdateWebhook(context.Background(), id, Updates{Config: &ConfigOptions{MaxRetries: intp(2)}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := m.EnqueueEvent(store.Event{ID: "evt_x", Type: "audit.finalized", Time: "t", Data: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, _ := m.GetDeliveryHistory(id, HistoryOptions{})
		if len(h) == 1 && h[0].Status == DeliveryFailed {
			if h[0].Attempts != 3 || h[0].StatusCode != 503 {
				t.Fatalf("%+v", h[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never gave up: %+v", h)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func intp(n int) *int { return &n }

func TestRedirectsAreNotFollowed(t *testing.T) { pgtest.EachStore(t, testRedirectsAreNotFollowed) }

func testRedirectsAreNotFollowed(t *testing.T) {
	target := newReceiver(t, 0)
	redir := httptest.NewServer(http.RedirectHandler(target.srv.URL, http.StatusFound))
	defer redir.Close()
	m := devManager(t, openStore(t, t.TempDir()))
	res, _ := m.Register(context.Background(), RegisterOptions{URL: redir.URL})
	r, err := m.TestWebhook(context.Background(), res.Webhook.ID)
	if err != nil || r.Success || r.StatusCode != 302 || !strings.Contains(r.Error, "redirect") || target.calls.Load() != 0 {
		t.Fatalf("redirect: %+v %v (target calls %d)", r, err, target.calls.Load())
	}
}

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestSSRFRefusedAtRegistrationInProduction(t *testing.T) {
	pgtest.EachStore(t, testSSRFRefusedAtRegistrationInProduction)
}

func testSSRFRefusedAtRegistrationInProduction(t *testing.T) {
	res := fakeResolver{
		"public.example":   {netip.MustParseAddr("93.184.216.34")},
		"internal.example": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.1.2.3")},
		"loop.example":     {netip.MustParseAddr("127.0.0.1")},
	}
	v := NewURLValidator(false, res)
	for _, tc := range []struct {
		url   string
		valid bool
	}{
		{"https://public.example/hook", true},
		{"http://93.184.216.34:8080/x", true},
		{"http://127.0.0.1/hook", false},
		{"http://127.1.2.3:9000/hook", false},
		{"http://[::1]/hook", false},
		{"http://[::ffff:127.0.0.1]/hook", false},
		{"http://10.0.0.1/hook", false},
		{"http://10.255.255.254/hook", false},
		{"http://192.168.1.1/", false},
		{"http://172.16.0.1/", false},
		{"http://169.254.169.254/latest/meta-data", false},
		{"http://[fe80::1]/", false},
		{"http://0.0.0.0/", false},
		{"http://localhost:8080/hook", false},
		{"http://api.localhost/hook", false},
		{"http://loop.example/hook", false},
		{"http://internal.example/hook", false},
		{"http://nowhere.example/hook", false},
		{"ftp://public.example/", false},
		{"javascript:alert(1)", false},
		{"https://user:pw@public.example/", false},
		{"https:///nohost", false},
		{"", false},
		{"https://public.example:99999/", false},
		{"https://public.example/" + strings.Repeat("a", MaxURLLength), false},
	} {
		got := v.Validate(context.Background(), tc.url)
		if got.Valid != tc.valid || (!got.Valid && got.Error == "") {
			t.Errorf("%q: %+v", tc.url, got)
		}
	}
	dev := NewURLValidator(true, res)
	for _, u := range []string{"http://127.0.0.1:1/x", "http://localhost/x", "http://[::1]/"} {
		if !dev.Validate(context.Background(), u).Valid {
			t.Errorf("development should allow %s", u)
		}
	}
	m := New(openStore(t, t.TempDir()), Options{Resolver: res})
	r, err := m.Register(context.Background(), RegisterOptions{URL: "http://169.254.169.254/"})
	if err == nil || r.Success || r.Error == "" {
		t.Fatalf("production registration of metadata address: %+v %v", r, err)
	}
}

func TestSSRFRefusedAtDialTime(t *testing.T) { pgtest.EachStore(t, testSSRFRefusedAtDialTime) }

func testSSRFRefusedAtDialTime(t *testing.T) {
	// Registered while in development (or while the name pointed
	// elsewhere), delivered by a production client: the dialer refuses.
	dir := t.TempDir()
	r := newReceiver(t, 0)
	dev := devManager(t, openStore(t, dir))
	_, port, _ := net.SplitHostPort(r.srv.Listener.Addr().String())
	prod := New(openStore(t, dir), Options{})
	for _, u := range []string{r.srv.URL, "http://localhost:" + port, "http://[::1]:" + port, "http://10.0.0.1:" + port, "http://169.254.169.254:" + port} {
		res, err := dev.Register(context.Background(), RegisterOptions{URL: u, Config: &ConfigOptions{Timeout: intp(2000)}})
		if err != nil {
			t.Fatal(err)
		}
		out, err := prod.TestWebhook(context.Background(), res.Webhook.ID)
		if err != nil || out.Success || !strings.Contains(out.Error, "prohibited") {
			t.Errorf("%s at dial time: %+v %v", u, out, err)
		}
	}
	if r.calls.Load() != 0 {
		t.Fatalf("receiver reached %d times", r.calls.Load())
	}
}

func TestSubscriptionsAndEventTypes(t *testing.T) {
	for _, tc := range []struct {
		types []string
		ev    string
		want  bool
	}{
		{nil, "anything.at_all", true},
		{[]string{"*"}, "task.created", true},
		{[]string{"task.*"}, "task.created", true},
		{[]string{"task.*"}, "task", false},
		{[]string{"task.*"}, "taskx.created", false},
		{[]string{"sdd.*"}, "sdd.lease.issued", true},
		{[]string{"api_key.created"}, "api_key.revoked", false},
		{[]string{"member.added", "workspace.*"}, "workspace.deleted", true},
	} {
		w := &Webhook{EventTypes: tc.types}
		if got := w.IsSubscribedTo(tc.ev); got != tc.want {
			t.Errorf("%v ∋ %s = %v", tc.types, tc.ev, got)
		}
	}
	for ev, want := range map[string]bool{
		"message.created": true, "usage.daily_reset": true, "api_key.rotated": true, "member.role_changed": true,
		"task.created": true, "sdd.lease.issued": true, "project.created": true, "thought.recorded": true,
		"message.deleted": false, "nope.created": false, "task": false, "Task.created": false, "": false, "*": false,
	} {
		if IsValidEventType(ev) != want {
			t.Errorf("IsValidEventType(%q) != %v", ev, want)
		}
	}
	for p, want := range map[string]bool{"*": true, "task.*": true, "batch.*": true, "bogus.*": false, "task.created": true, "**": false} {
		if IsValidPattern(p) != want {
			t.Errorf("IsValidPattern(%q) != %v", p, want)
		}
	}
	w := &Webhook{}
	if err := w.SetEventTypes([]string{"task.*", "bogus"}); err == nil {
		t.Error("bogus type accepted")
	}
}

func TestWebhookLifecycle(t *testing.T) { pgtest.EachStore(t, testWebhookLifecycle) }

func testWebhookLifecycle(t *testing.T) {
	m := devManager(t, openStore(t, t.TempDir()))
	r := newReceiver(t, 0)
	id := register(t, m, r, "workspace.*")
	w, _ := m.GetWebhook(id)
	raw, _ := w.ToJSON()
	if strings.Contains(string(raw), w.Secret) || !strings.Contains(string(raw), `"hasSecret":true`) {
		t.Fatalf("ToJSON leaks: %s", raw)
	}
	if !strings.HasPrefix(id, "wh_") || len(strings.Split(id, "_")) != 3 {
		t.Fatalf("id %s", id)
	}
	if ok, _ := m.Pause(id); !ok {
		t.Fatal("pause")
	}
	// A paused webhook holds the event instead of receiving it.
	if res, _ := m.TriggerEvent(context.Background(), "workspace.created", nil); res.Triggered != 1 || res.Held != 1 || res.Delivered != 0 || res.Pending != 0 {
		t.Fatalf("paused webhook: %+v", res)
	}
	_, _ = m.Resume(id)
	old := w.Secret
	newSecret, err := m.RotateSecret(id, "")
	if err != nil || newSecret == old {
		t.Fatal(err)
	}
	// The receiver still only knows the old secret: the old signature rides
	// along in webhook-signature during the grace period, but the
	// X-Cairn-Signature-256 header uses the new one.
	res, _ := m.TriggerEvent(context.Background(), "workspace.created", map[string]any{"id": "ws_1"})
	if res.Triggered != 1 || res.Delivered != 0 {
		t.Fatalf("old-secret receiver: %+v", res)
	}
	r.mu.Lock()
	r.secret = newSecret
	r.mu.Unlock()
	tr, _ := m.TestWebhook(context.Background(), id)
	if !tr.Success {
		t.Fatalf("test after rotation: %+v", tr)
	}
	if _, err := m.TriggerEvent(context.Background(), "bogus.event", nil); err == nil {
		t.Fatal("bogus event type accepted")
	}
	if ok, _ := m.Unregister(id); !ok {
		t.Fatal("unregister")
	}
	if got, _ := m.GetWebhook(id); got != nil {
		t.Fatal("still there")
	}
	h, _ := m.GetDeliveryHistory(id, HistoryOptions{})
	for _, d := range h {
		if d.Status == DeliveryPending {
			t.Fatalf("pending delivery survived unregister: %+v", d)
		}
	}
	if _, err := m.Register(context.Background(), RegisterOptions{URL: r.srv.URL, Secret: "short"}); err == nil {
		t.Fatal("short secret accepted")
	}
	if _, err := m.Register(context.Background(), RegisterOptions{URL: r.srv.URL, Config: &ConfigOptions{MaxRetries: intp(11)}}); err == nil {
		t.Fatal("maxRetries 11 accepted")
	}
}

func TestErrorStatusAfterRepeatedFailures(t *testing.T) {
	w := &Webhook{Status: StatusActive}
	for i := 0; i < ErrorThreshold-1; i++ {
		w.UpdateStats(false, time.Now())
	}
	if w.Status != StatusActive {
		t.Fatal("too early")
	}
	w.UpdateStats(false, time.Now())
	if w.Status != StatusError {
		t.Fatal("no error status")
	}
	_ = w.SetStatus(StatusActive)
	if w.Stats.ConsecutiveFailures != 0 {
		t.Fatal("resume keeps the failure run")
	}
}

func TestSignAndVerify(t *testing.T) {
	p := []byte(`{"a":1}`)
	s := Sign(p, "topsecret-0123456789")
	if !strings.HasPrefix(s, "sha256=") || len(s) != 71 || !Verify(p, s, "topsecret-0123456789") || Verify(p, s, "other-secret-0123456") || Verify([]byte(`{"a":2}`), s, "topsecret-0123456789") {
		t.Fatalf("sign/verify %s", s)
	}
	sec := GenerateSecret()
	if !strings.HasPrefix(sec, SecretPrefix) || len(StandardKey(sec)) != 32 {
		t.Fatalf("secret %s", sec)
	}
	sig := StandardSignature("msg_1", 1700000000, p, sec)
	if !VerifyStandard("msg_1", 1700000000, p, "v1,bogus "+sig, sec) || VerifyStandard("msg_1", 1700000001, p, sig, sec) {
		t.Fatal("standard signature")
	}
}

func FuzzParseWebhookURL(f *testing.F) {
	for _, s := range []string{"https://example.com/x", "http://127.0.0.1:8080", "http://[::1]/", "ftp://x", "http://a:b@c/", "%", "http://[fe80::1%25eth0]/"} {
		f.Add(s)
	}
	v := NewURLValidator(false, fakeResolver{})
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseWebhookURL(s)
		if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.User != nil) {
			t.Fatalf("%q accepted as %v", s, u)
		}
		r := v.Validate(context.Background(), s)
		if r.Valid {
			// The fake resolver knows no names, so only public IP literals
			// can pass.
			ip, perr := netip.ParseAddr(u.Hostname())
			if perr != nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
				t.Fatalf("%q passed production validation", s)
			}
		}
	})
}

// The history keeps the newest finished deliveries up to the bound, and
// drops the deliveries themselves, not only their index entries.
func TestDeliveryHistoryIsBounded(t *testing.T) { pgtest.EachStore(t, testDeliveryHistoryIsBounded) }

func testDeliveryHistoryIsBounded(t *testing.T) {
	saved := maxHistoryPerWebhook
	maxHistoryPerWebhook = 5
	defer func() { maxHistoryPerWebhook = saved }()
	st := openStore(t, t.TempDir())
	m := devManager(t, st)
	r := newReceiver(t, 0)
	id := register(t, m, r)
	w, _ := m.GetWebhook(id)
	for i := 0; i < 12; i++ {
		ev := store.Event{ID: fmt.Sprintf("evt_%02d", i), Type: "task.created", Time: "2026-11-22T00:00:00.000Z"}
		if res, err := m.Deliver(context.Background(), w, ev); err != nil || !res.Success {
			t.Fatalf("deliver %d: %+v %v", i, res, err)
		}
	}
	hist, err := m.GetDeliveryHistory(id, HistoryOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 5 || hist[0].EventID != "evt_11" || hist[4].EventID != "evt_07" {
		var got []string
		for _, d := range hist {
			got = append(got, d.EventID)
		}
		t.Fatalf("history %v, want the newest five, evt_11 … evt_07", got)
	}
	n := 0
	_ = st.View(func(tx store.Tx) error {
		return tx.Bucket([]byte(store.BucketDeliveries)).ForEach(func(_, _ []byte) error { n++; return nil })
	})
	if n != 5 {
		t.Fatalf("%d deliveries stored, want 5", n)
	}
}
