package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/internal/poll"
)

// fakeHost serves relayed sessions by draining them and HTTP with a plain
// net/http server, as the real host does: bind, ready, serve until ctx.
type fakeHost struct {
	// fail, when closed, makes every open listener fail.
	fail chan struct{}
}

func (f *fakeHost) ServeSession(_ context.Context, rw io.ReadWriter, _ Hello) error {
	_, err := io.Copy(io.Discard, rw)
	return err
}
func (f *fakeHost) Check(Hello) ([]string, error) { return nil, nil }
func (f *fakeHost) Status(s []SessionInfo, l []HTTPListener) any {
	return map[string]any{"sessions": s, "listeners": l}
}
func (f *fakeHost) Reload() {}
func (f *fakeHost) Control(verb string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("unknown %q", verb)
}

func (f *fakeHost) ServeHTTP(ctx context.Context, hello Hello, ready func(HTTPListener)) error {
	ln, err := net.Listen("tcp", hello.Addr)
	if err != nil {
		return fmt.Errorf("ERR_INIT_FAILED: cannot listen on %s: %v", hello.Addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	ready(HTTPListener{Addr: ln.Addr().String(), URL: "http://" + ln.Addr().String() + "/mcp", APIKeysRequired: !hello.NoAuth})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	select {
	case <-ctx.Done():
		return nil
	case <-f.fail:
		return errors.New("serve: the listener failed")
	}
}

// runDaemon runs a daemon on a fresh data dir until the test ends; done
// is closed when Run returns.
func runDaemon(t *testing.T, h Handler, idle time.Duration) (p Paths, stop func(), done chan struct{}) {
	t.Helper()
	return runDaemonWith(t, h, Options{Idle: idle, Version: "test"})
}

// runDaemonWith is runDaemon with all of Run's options.
func runDaemonWith(t *testing.T, h Handler, opts Options) (p Paths, stop func(), done chan struct{}) {
	t.Helper()
	p = PathsFor(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		if err := Run(ctx, p, h, opts); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	waitFor(t, "the daemon's socket", func() bool { _, ok := Running(p); return ok })
	return p, cancel, done
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, what, f)
}

// noStart fails a test whose daemon should already be running.
func noStart(t *testing.T) Starter {
	return func() (func() (bool, error), error) {
		t.Error("a daemon was started though one runs")
		return nil, errors.New("no start in this test")
	}
}

func openHTTP(t *testing.T, p Paths, addr string) *HTTPHold {
	t.Helper()
	hold, err := OpenHTTP(context.Background(), p, Hello{Addr: addr, ClientPID: 4242, AgentID: "ops"}, noStart(t), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return hold
}

func answers(url string) bool {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func refuses(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return true
	}
	conn.Close()
	return false
}

func statusListeners(t *testing.T, p Paths) []HTTPListener {
	t.Helper()
	w, err := Control(p, "status", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Listeners []HTTPListener `json:"listeners"`
	}
	if err := json.Unmarshal(w.Status, &st); err != nil {
		t.Fatal(err)
	}
	return st.Listeners
}

// A listener serves while its holder's connection is open, is listed in
// the status, and closes when the holder's connection closes without a
// word, as when `cairn serve --http` is killed.
func TestHTTPListenerLivesWithItsHolder(t *testing.T) {
	t.Parallel()
	p, _, _ := runDaemon(t, &fakeHost{}, time.Hour)
	hold := openHTTP(t, p, "127.0.0.1:0")
	if hold.DaemonPID != os.Getpid() || !hold.Listener.APIKeysRequired || !strings.HasSuffix(hold.Listener.URL, "/mcp") {
		t.Fatalf("hold %+v", hold)
	}
	if !answers(hold.Listener.URL) {
		t.Fatal("the listener does not answer")
	}
	ls := statusListeners(t, p)
	if len(ls) != 1 || ls[0].Addr != hold.Listener.Addr || ls[0].ClientPID != 4242 || ls[0].AgentID != "ops" || ls[0].Since == "" {
		t.Fatalf("status lists %+v", ls)
	}
	_ = hold.Close()
	waitFor(t, "the port to refuse", func() bool { return refuses(hold.Listener.Addr) })
	waitFor(t, "the status to drop the listener", func() bool { return len(statusListeners(t, p)) == 0 })
}

// Wait, when its command ends, returns only once the daemon has closed the
// listener: the port refuses as soon as the command is gone.
func TestHTTPWaitReturnsWithTheListenerClosed(t *testing.T) {
	t.Parallel()
	p, _, _ := runDaemon(t, &fakeHost{}, time.Hour)
	hold := openHTTP(t, p, "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := hold.Wait(ctx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if !refuses(hold.Listener.Addr) {
		t.Fatal("the port still accepts after Wait returned")
	}
}

// A second listener on the same address is refused with its holder named;
// an address another program holds is refused with the bind's own error.
func TestHTTPSameAddressRefused(t *testing.T) {
	t.Parallel()
	p, _, _ := runDaemon(t, &fakeHost{}, time.Hour)
	hold := openHTTP(t, p, "127.0.0.1:0")
	defer hold.Close()
	_, err := OpenHTTP(context.Background(), p, Hello{Addr: hold.Listener.Addr, ClientPID: 7}, noStart(t), 5*time.Second)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already serves HTTP there") || !strings.Contains(err.Error(), "pid 4242") {
		t.Fatalf("same address: %v", err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = OpenHTTP(context.Background(), p, Hello{Addr: other.Addr().String()}, noStart(t), 5*time.Second)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("address in use: %v", err)
	}
	if ls := statusListeners(t, p); len(ls) != 1 {
		t.Fatalf("refused listeners listed: %+v", ls)
	}
	if !answers(hold.Listener.URL) {
		t.Fatal("the first listener stopped answering")
	}
}

// A daemon with a listener open does not go idle, and goes idle once the
// listener closes. Its idle timer runs on a fake clock: eight idle periods
// pass in no time, and none passes before the listener opens.
func TestDaemonDoesNotIdleUnderAListener(t *testing.T) {
	t.Parallel()
	const idle = time.Minute
	clock := &fakeTimers{}
	p, _, done := runDaemonWith(t, &fakeHost{}, Options{Idle: idle, Version: "test", afterFunc: clock.afterFunc})
	hold, err := OpenHTTP(context.Background(), p, Hello{Addr: "127.0.0.1:0"}, noStart(t), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	clock.advance(8 * idle)
	select {
	case <-done:
		t.Fatal("the daemon went idle under an open listener")
	default:
	}
	if !answers(hold.Listener.URL) {
		t.Fatal("the listener stopped answering")
	}
	_ = hold.Close()
	waitFor(t, "the idle timer to start once the listener closed", func() bool { return clock.armed() > 0 })
	clock.advance(idle)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not go idle after its listener closed")
	}
}

// Wait says why the daemon closed a listener: its server's error, the
// daemon stopped on purpose (cairn stop), or the daemon lost.
func TestHTTPWaitSaysWhyTheListenerClosed(t *testing.T) {
	t.Parallel()
	f := &fakeHost{fail: make(chan struct{})}
	p, _, _ := runDaemon(t, f, time.Hour)
	hold := openHTTP(t, p, "127.0.0.1:0")
	close(f.fail)
	if err := hold.Wait(context.Background(), time.Second); err == nil || !strings.Contains(err.Error(), "the listener failed") {
		t.Fatalf("failed listener: %v", err)
	}

	p, _, _ = runDaemon(t, &fakeHost{}, time.Hour)
	hold = openHTTP(t, p, "127.0.0.1:0")
	if _, err := Control(p, "stop", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := hold.Wait(context.Background(), time.Second); !errors.Is(err, ErrDaemonStopped) {
		t.Fatalf("after cairn stop: %v", err)
	}

	p, stop, _ := runDaemon(t, &fakeHost{}, time.Hour)
	hold = openHTTP(t, p, "127.0.0.1:0")
	stop() // the daemon ends without saying it stops on purpose
	if err := hold.Wait(context.Background(), time.Second); !errors.Is(err, ErrDaemonLost) {
		t.Fatalf("daemon gone: %v", err)
	}
	waitFor(t, "the listener to close with its daemon", func() bool { return refuses(hold.Listener.Addr) })
}

func TestRunningReadsThePID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, ok := Running(PathsFor(dir)); ok {
		t.Fatal("a daemon runs in an empty dir")
	}
	p, _, _ := runDaemon(t, &fakeHost{}, time.Hour)
	if pid, ok := Running(p); !ok || pid != os.Getpid() {
		t.Fatalf("Running: %d %v", pid, ok)
	}
}
