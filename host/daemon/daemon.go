// Package daemon lets many agent hosts share one cairn: the first `cairn
// serve` on a data dir starts a daemon that owns the plugins and the stores,
// and every `cairn serve` relays its stdio session to it over a Unix socket
// in the data dir. `cairn serve --http` asks the same daemon to open an HTTP
// listener and holds it open for as long as it runs (http.go). The daemon
// serves any number of sessions and listeners and exits after an idle
// period once the last one is gone.
//
// Start-up is race-free without a coordinator: the daemon holds an exclusive
// flock on daemon.lock for its whole life (the kernel drops it when the
// process dies, even by SIGKILL), and starters serialise on start.lock, so
// two `cairn serve` at the same instant end with one daemon, and a socket
// left by a crashed daemon is recognised as stale and replaced.
package daemon

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-mcp/cairn/host/internal/datadir"
)

// Paths are the daemon's files for one data dir.
type Paths struct {
	DataDir   string
	Socket    string
	Lock      string
	StartLock string
	Info      string
	Log       string
	// Stopped records the pid of a daemon that stopped on purpose, so its
	// relays wait for their client instead of starting a new one at once.
	Stopped string
}

// maxSocketPath keeps the socket path within the kernel's sun_path limit
// (108 bytes on Linux, 104 on macOS).
const maxSocketPath = 100

// PathsFor returns the daemon files of dataDir. The socket lives in the data
// dir unless that path is too long for a Unix socket; then it moves to the
// temporary directory under a name derived from the data dir.
func PathsFor(dataDir string) Paths {
	abs, err := filepath.Abs(dataDir)
	if err == nil {
		dataDir = abs
	}
	p := Paths{
		DataDir:   dataDir,
		Socket:    filepath.Join(dataDir, "daemon.sock"),
		Lock:      filepath.Join(dataDir, "daemon.lock"),
		StartLock: filepath.Join(dataDir, "daemon.start.lock"),
		Info:      filepath.Join(dataDir, "daemon.json"),
		Log:       filepath.Join(dataDir, "daemon.log"),
		Stopped:   filepath.Join(dataDir, "daemon.stopped"),
	}
	if len(p.Socket) > maxSocketPath {
		sum := sha256.Sum256([]byte(dataDir))
		p.Socket = filepath.Join(os.TempDir(), fmt.Sprintf("cairn-%d-%s.sock", os.Getuid(), hex.EncodeToString(sum[:8])))
	}
	return p
}

// Hello is the first line a client sends: a relayed MCP session or a control
// request.
type Hello struct {
	Relay     int    `json:"cairn_relay,omitempty"`
	Control   string `json:"cairn_control,omitempty"` // "status", "reload", "stop" or a Handler.Control verb
	AgentID   string `json:"agent_id,omitempty"`
	ClientPID int    `json:"client_pid,omitempty"`
	// Mode and Toolsets are the relay's own settings, so the daemon can warn
	// when they differ from the ones it runs with.
	Mode     string `json:"mode,omitempty"`
	Toolsets string `json:"toolsets,omitempty"`
	// SessionKey identifies a relayed session across daemon restarts; with a
	// JSON-RPC id it forms each call's idempotency key.
	SessionKey string `json:"session_key,omitempty"`
	// Project, Root and ToolsetsSet are the rest of the session's own
	// settings (D21): CAIRN_PROJECT, the workspace root, and whether
	// CAIRN_TOOLSETS was set explicitly.
	Project     string `json:"project,omitempty"`
	Root        string `json:"root,omitempty"`
	ToolsetsSet bool   `json:"toolsets_set,omitempty"`
	// Warnings are what the relay found wrong in its own settings; the
	// daemon tells the session's client too.
	Warnings []string `json:"warnings,omitempty"`
	// Resume marks a session the relay re-opens after losing its daemon;
	// Replay lists the JSON-RPC ids (as JSON text) it sends again.
	Resume bool     `json:"resume,omitempty"`
	Replay []string `json:"replay,omitempty"`
	// Data is the argument of a Handler.Control verb (the operator CLI's
	// "call": one tool call, run as the local operator).
	Data json.RawMessage `json:"data,omitempty"`
	// Addr and NoAuth are a ControlHTTP request's listener: the address to
	// bind and whether to serve it without API keys.
	Addr   string `json:"addr,omitempty"`
	NoAuth bool   `json:"no_auth,omitempty"`
	// HTTPEnv is the requester's CAIRN_HTTP_* environment: the listener's
	// own settings (allowed origins, session idle, ...).
	HTTPEnv map[string]string `json:"http_env,omitempty"`
}

// Welcome is the daemon's answer to Hello.
type Welcome struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Warnings are what the daemon knows about the session's start that
	// its user should see: malformed skills, failed plugins, ...
	Warnings  []string        `json:"warnings,omitempty"`
	DaemonPID int             `json:"daemon_pid"`
	Version   string          `json:"version,omitempty"`
	Status    json.RawMessage `json:"status,omitempty"`
}

// Info is written to daemon.json while the daemon runs.
type Info struct {
	PID       int    `json:"pid"`
	Socket    string `json:"socket"`
	StartedAt string `json:"started_at"`
	Version   string `json:"version"`
}

// flock takes an exclusive lock on path, blocking unless nonBlocking.
func flock(path string, nonBlocking bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if nonBlocking {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ErrNotRunning reports that no daemon answers for the data dir.
var ErrNotRunning = errors.New("no cairn daemon is running for this data dir")

// Running reports whether a daemon answers on p's socket, and its pid as
// daemon.json records it (0 when unreadable). It sends nothing: a daemon
// ignores a connection that says nothing.
func Running(p Paths) (pid int, ok bool) {
	conn, err := net.DialTimeout("unix", p.Socket, time.Second)
	if err != nil {
		return 0, false
	}
	_ = conn.Close()
	var info Info
	if b, err := os.ReadFile(p.Info); err == nil {
		_ = json.Unmarshal(b, &info)
	}
	return info.PID, true
}

// Dial connects to the running daemon and exchanges Hello and Welcome. The
// returned reader holds whatever the daemon sent after its Welcome line.
func Dial(p Paths, hello Hello, timeout time.Duration) (net.Conn, *bufio.Reader, Welcome, error) {
	conn, err := net.DialTimeout("unix", p.Socket, timeout)
	if err != nil {
		return nil, nil, Welcome{}, ErrNotRunning
	}
	b, _ := json.Marshal(hello)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(append(b, '\n')); err != nil {
		conn.Close()
		return nil, nil, Welcome{}, fmt.Errorf("daemon hello: %w", err)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := r.ReadBytes('\n')
	if err != nil {
		conn.Close()
		return nil, nil, Welcome{}, fmt.Errorf("daemon did not answer: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	var w Welcome
	if err := json.Unmarshal(line, &w); err != nil {
		conn.Close()
		return nil, nil, Welcome{}, fmt.Errorf("daemon answered %q: %w", line, err)
	}
	if !w.OK {
		conn.Close()
		return nil, nil, w, fmt.Errorf("daemon refused: %s", w.Error)
	}
	return conn, r, w, nil
}

// StartError is a daemon that could not start and said why (its error
// line, "ERR_CODE: text"): the same cause would stop every retry, so the
// relay reports it at once instead of starting daemons again.
type StartError struct {
	// Line is the daemon's own report of the failure.
	Line string
}

func (e *StartError) Error() string { return e.Line }

// Starter launches a daemon process and returns a function reporting whether
// it has exited (and with what error), so Connect stops waiting for a
// daemon that died.
type Starter func() (exited func() (bool, error), err error)

// Connect dials the daemon of p, starting one with start when none answers.
// Concurrent callers serialise on the start lock, so only one starts a
// daemon; the others find it running.
func Connect(ctx context.Context, p Paths, hello Hello, start Starter, timeout time.Duration) (net.Conn, *bufio.Reader, Welcome, error) {
	if c, r, w, err := Dial(p, hello, timeout); err == nil || !errors.Is(err, ErrNotRunning) {
		return c, r, w, err
	}
	if err := datadir.Make(p.DataDir, 0o700); err != nil {
		return nil, nil, Welcome{}, err
	}
	lock, err := lockWithin(ctx, p.StartLock, timeout)
	if err != nil {
		return nil, nil, Welcome{}, fmt.Errorf("waiting for another cairn to start the daemon: %w", err)
	}
	defer lock.Close()
	if c, r, w, err := Dial(p, hello, timeout); err == nil || !errors.Is(err, ErrNotRunning) {
		return c, r, w, err
	}
	exited, err := start()
	if err != nil {
		return nil, nil, Welcome{}, err
	}
	deadline := time.Now().Add(timeout)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		c, r, w, err := Dial(p, hello, timeout)
		if err == nil || !errors.Is(err, ErrNotRunning) {
			return c, r, w, err
		}
		if done, werr := exited(); done {
			var se *StartError
			if errors.As(werr, &se) {
				return nil, nil, Welcome{}, se
			}
			return nil, nil, Welcome{}, fmt.Errorf("the cairn daemon exited during start-up (%v); its log is %s", werr, p.Log)
		}
		if time.Now().After(deadline) {
			return nil, nil, Welcome{}, fmt.Errorf("the cairn daemon did not open %s within %s; its log is %s", p.Socket, timeout, p.Log)
		}
		select {
		case <-ctx.Done():
			return nil, nil, Welcome{}, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// lockWithin takes the start lock, giving up after timeout.
func lockWithin(ctx context.Context, path string, timeout time.Duration) (*os.File, error) {
	deadline := time.Now().Add(timeout)
	for {
		f, err := flock(path, true)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is still locked after %s", path, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Handler is what the daemon serves.
type Handler interface {
	// ServeSession serves one relayed MCP session over rw.
	ServeSession(ctx context.Context, rw io.ReadWriter, hello Hello) error
	// Check validates a relayed session's settings: an error refuses the
	// session with its real cause; warnings go to the relay's stderr.
	Check(hello Hello) (warnings []string, err error)
	// ServeHTTP serves MCP over HTTP on hello.Addr with the options of a
	// ControlHTTP hello until ctx ends. It calls ready once the listener is
	// bound; an error before that is the listener's refusal.
	ServeHTTP(ctx context.Context, hello Hello, ready func(HTTPListener)) error
	// Status describes the daemon for `cairn status`.
	Status(sessions []SessionInfo, listeners []HTTPListener) any
	// Reload re-reads the configuration (a relay forwards its SIGHUP).
	Reload()
	// Control answers any other control request (Hello.Control) with a
	// JSON result, or an error the requester prints.
	Control(verb string, data json.RawMessage) (json.RawMessage, error)
}

// SessionInfo describes one live relayed session.
type SessionInfo struct {
	ID        int    `json:"id"`
	AgentID   string `json:"agent_id,omitempty"`
	ClientPID int    `json:"client_pid,omitempty"`
	Since     string `json:"since"`
	// Mode, Toolsets and Project are what the session asked for in its
	// hello (empty: the defaults), for the dashboard's system page.
	Mode     string `json:"mode,omitempty"`
	Toolsets string `json:"toolsets,omitempty"`
	Project  string `json:"project,omitempty"`
}

// Options tune Run.
type Options struct {
	// Idle is how long the daemon waits with no session before it exits.
	Idle    time.Duration
	Version string
	// Logf logs a line (to the daemon's stderr).
	Logf func(format string, args ...any)
	// Busy, when set, keeps an idle daemon up while it reports true: MCP
	// tasks still working, whose clients come back for the result
	// (docs/decisions.md D39).
	Busy func() bool
	// afterFunc starts the idle timer (nil: time.AfterFunc); a test gives
	// a fake clock's, so it need not wait out idle periods.
	afterFunc func(d time.Duration, f func()) stopper
}

// stopper is a timer as the daemon uses it: started, then maybe stopped.
type stopper interface{ Stop() bool }

// ErrAlreadyRunning is returned by Run when another daemon holds the lock.
var ErrAlreadyRunning = errors.New("a cairn daemon is already running for this data dir")

// Lock takes the daemon lock of p without blocking. Holding it proves the
// daemon alive; the kernel releases it when the process dies.
func Lock(p Paths) (*os.File, error) {
	if err := datadir.Make(p.DataDir, 0o700); err != nil {
		return nil, err
	}
	f, err := flock(p.Lock, true)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, ErrAlreadyRunning
	}
	return f, err
}

// Run serves sessions on p's socket until ctx ends, a stop request arrives,
// or no session has been open for opts.Idle. The caller holds the lock
// (Lock) and has started everything h needs.
func Run(ctx context.Context, p Paths, h Handler, opts Options) error {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	if opts.afterFunc == nil {
		opts.afterFunc = func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }
	}
	// Whatever is at the socket path belongs to a dead daemon: we hold the
	// lock a live one would hold.
	_ = os.Remove(p.Socket)
	// daemon.json is whole before the socket answers: whoever finds the
	// socket (Running) reads this daemon's pid, never an empty file.
	info, _ := json.Marshal(Info{PID: os.Getpid(), Socket: p.Socket, StartedAt: time.Now().UTC().Format(time.RFC3339Nano), Version: opts.Version})
	if tmp := p.Info + ".tmp"; os.WriteFile(tmp, info, 0o600) == nil {
		_ = os.Rename(tmp, p.Info)
	}
	defer os.Remove(p.Info)
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", p.Socket, err)
	}
	_ = os.Chmod(p.Socket, 0o600)
	defer os.Remove(p.Socket)

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { <-ctx.Done(); ln.Close() }()

	var (
		mu       sync.Mutex
		sessions = map[int]SessionInfo{}
		nextID   int
		idle     stopper
		wg       sync.WaitGroup
		// listeners are the HTTP listeners held open by `cairn serve
		// --http` commands; the daemon does not go idle under one.
		listeners = &httpListeners{byKey: map[string]*HTTPListener{}}
	)
	var armIdle func()
	armIdle = func() { // with mu held
		if idle != nil {
			idle.Stop()
		}
		idle = opts.afterFunc(opts.Idle, func() {
			mu.Lock()
			n := len(sessions) + listeners.count()
			mu.Unlock()
			if n == 0 && opts.Busy != nil && opts.Busy() {
				opts.Logf("no session for %s, but tasks are working: staying", opts.Idle)
				mu.Lock()
				if len(sessions)+listeners.count() == 0 {
					armIdle()
				}
				mu.Unlock()
				return
			}
			if n == 0 {
				opts.Logf("no session for %s: stopping", opts.Idle)
				markStopped(p)
				stop()
			}
		})
	}
	mu.Lock()
	armIdle()
	mu.Unlock()

	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			opts.Logf("accept: %v", err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			// Ending the daemon ends its sessions: close the connection so
			// a session blocked reading from its relay returns.
			defer context.AfterFunc(ctx, func() { conn.Close() })()
			r := bufio.NewReaderSize(conn, 64<<10)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := r.ReadBytes('\n')
			_ = conn.SetReadDeadline(time.Time{})
			var hello Hello
			if err != nil || json.Unmarshal(line, &hello) != nil {
				return
			}
			reply := func(w Welcome) bool {
				w.DaemonPID, w.Version = os.Getpid(), opts.Version
				b, _ := json.Marshal(w)
				_, err := conn.Write(append(b, '\n'))
				return err == nil
			}
			switch {
			case hello.Control == "status":
				mu.Lock()
				list := make([]SessionInfo, 0, len(sessions))
				for _, s := range sessions {
					list = append(list, s)
				}
				held := listeners.list()
				mu.Unlock()
				st, _ := json.Marshal(h.Status(list, held))
				reply(Welcome{OK: true, Status: st})
				return
			case hello.Control == "reload":
				reply(Welcome{OK: true})
				opts.Logf("reload requested")
				h.Reload()
				return
			case hello.Control == ControlHTTP:
				serveListener(ctx, conn, r, hello, h, listeners, reply, func(opened bool) {
					mu.Lock()
					defer mu.Unlock()
					switch {
					case opened && idle != nil:
						idle.Stop()
					case !opened && len(sessions) == 0 && listeners.count() == 0:
						armIdle()
					}
				}, opts.Logf)
				return
			case hello.Control == "stop":
				reply(Welcome{OK: true})
				opts.Logf("stop requested")
				markStopped(p)
				stop()
				return
			case hello.Control != "":
				res, err := h.Control(hello.Control, hello.Data)
				if err != nil {
					reply(Welcome{OK: false, Error: err.Error()})
					return
				}
				reply(Welcome{OK: true, Status: res})
				return
			case hello.Relay != 1:
				reply(Welcome{OK: false, Error: "unknown request; this daemon speaks relay protocol 1"})
				return
			}
			warnings, cerr := h.Check(hello)
			if cerr != nil {
				reply(Welcome{OK: false, Error: cerr.Error()})
				return
			}
			if !reply(Welcome{OK: true, Warnings: warnings}) {
				return
			}
			mu.Lock()
			nextID++
			id := nextID
			sessions[id] = SessionInfo{ID: id, AgentID: hello.AgentID, ClientPID: hello.ClientPID, Since: time.Now().UTC().Format(time.RFC3339),
				Mode: hello.Mode, Toolsets: hello.Toolsets, Project: hello.Project}
			if idle != nil {
				idle.Stop()
			}
			mu.Unlock()
			opts.Logf("session %d opened (client pid %d, resumed %v, replaying %d)", id, hello.ClientPID, hello.Resume, len(hello.Replay))
			err = h.ServeSession(ctx, bufferedConn{Reader: r, Conn: conn}, hello)
			mu.Lock()
			delete(sessions, id)
			if len(sessions) == 0 && listeners.count() == 0 {
				armIdle()
			}
			mu.Unlock()
			opts.Logf("session %d closed (%v)", id, err)
		}()
	}
	// Sessions end with ctx; wait for them so the host shuts down after its
	// last call.
	wg.Wait()
	mu.Lock()
	if idle != nil {
		idle.Stop()
	}
	mu.Unlock()
	return nil
}

// bufferedConn reads through the reader that consumed the Hello line.
type bufferedConn struct {
	*bufio.Reader
	net.Conn
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.Reader.Read(p) }

// markStopped records that this daemon stops on purpose.
func markStopped(p Paths) {
	_ = os.WriteFile(p.Stopped, []byte(strconv.Itoa(os.Getpid())), 0o600)
}

// StoppedOnPurpose reports whether the daemon with pid stopped on purpose
// (cairn stop, or idle) rather than died.
func StoppedOnPurpose(p Paths, pid int) bool {
	b, err := os.ReadFile(p.Stopped)
	if err != nil || pid == 0 {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n == pid
}

// newSessionKey returns a random id for a relayed session.
func newSessionKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Control sends a control request (status, reload, stop) to the running
// daemon.
func Control(p Paths, what string, timeout time.Duration) (Welcome, error) {
	return Send(p, Hello{Control: what}, timeout)
}

// Send sends one control Hello to the running daemon and returns its answer.
func Send(p Paths, hello Hello, timeout time.Duration) (Welcome, error) {
	conn, _, w, err := Dial(p, hello, timeout)
	if err != nil {
		return w, err
	}
	conn.Close()
	return w, nil
}
