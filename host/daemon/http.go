package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"time"
)

// ControlHTTP is the control request of `cairn serve --http` on a data dir
// whose daemon runs (or may be started): the daemon opens an HTTP listener
// with the hello's Addr, NoAuth and session settings, answers with the
// HTTPListener it bound, and keeps it open for as long as the requester
// keeps the connection open. The requester ending — Ctrl-C, SIGTERM, or
// SIGKILL, when the kernel closes its socket — closes the listener, so one
// process owns the stores and every transport (docs/decisions.md D21).
const ControlHTTP = "http"

// HTTPListener describes one HTTP listener the daemon holds.
type HTTPListener struct {
	// Addr is the bound address (host:port).
	Addr string `json:"addr"`
	// URL is where MCP is served: http://Addr/mcp.
	URL             string `json:"url"`
	APIKeysRequired bool   `json:"api_keys_required"`
	// ClientPID is the `cairn serve --http` that holds it open.
	ClientPID int    `json:"client_pid,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	Project   string `json:"project,omitempty"`
	Since     string `json:"since"`

	requested string
}

// httpClosed is the line the daemon writes before it closes a held
// listener's connection for a reason of its own.
type httpClosed struct {
	Error string `json:"error,omitempty"`
}

// httpListeners are the listeners of one daemon, from the moment their
// address is claimed until they are closed.
type httpListeners struct {
	mu    sync.Mutex
	byKey map[string]*HTTPListener
	seq   int
}

// claim records l, unless another listener holds or is opening the address
// it asks for: then it returns that one. Port 0 never conflicts.
func (ls *httpListeners) claim(l *HTTPListener) (key string, holder *HTTPListener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, port, err := net.SplitHostPort(l.requested); err == nil && port != "0" {
		for _, o := range ls.byKey {
			if o.requested == l.requested || o.Addr == l.requested {
				return "", o
			}
		}
	}
	ls.seq++
	key = fmt.Sprint(ls.seq)
	ls.byKey[key] = l
	return key, nil
}

// opened fills in what the listener bound.
func (ls *httpListeners) opened(key string, bound HTTPListener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.byKey[key]; l != nil {
		l.Addr, l.URL, l.APIKeysRequired, l.Since = bound.Addr, bound.URL, bound.APIKeysRequired, bound.Since
	}
}

func (ls *httpListeners) release(key string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.byKey, key)
}

// count includes listeners still opening: the daemon must not go idle
// under one.
func (ls *httpListeners) count() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.byKey)
}

// list returns the open listeners, oldest first.
func (ls *httpListeners) list() []HTTPListener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]HTTPListener, 0, len(ls.byKey))
	for _, l := range ls.byKey {
		if l.Addr != "" {
			out = append(out, *l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Since != out[j].Since {
			return out[i].Since < out[j].Since
		}
		return out[i].Addr < out[j].Addr
	})
	return out
}

// serveListener answers a ControlHTTP hello on conn: it opens the listener
// through h, replies with it (or with the reason it could not open), and
// holds it until the requester closes conn or the daemon stops. changed
// tells Run when a listener was opened or released, for its idle timer.
func serveListener(ctx context.Context, conn net.Conn, r *bufio.Reader, hello Hello, h Handler, ls *httpListeners,
	reply func(Welcome) bool, changed func(opened bool), logf func(string, ...any)) {
	if hello.Addr == "" {
		reply(Welcome{OK: false, Error: "ERR_CONFIG_INVALID: an HTTP listener needs an address (host:port)"})
		return
	}
	entry := &HTTPListener{requested: hello.Addr, ClientPID: hello.ClientPID, AgentID: hello.AgentID, Project: hello.Project}
	key, holder := ls.claim(entry)
	if holder != nil {
		reply(Welcome{OK: false, Error: fmt.Sprintf("ERR_INIT_FAILED: cannot listen on %s: this data dir's cairn daemon already serves HTTP there for `cairn serve --http` (pid %d); stop that command first, or choose another address", hello.Addr, holder.ClientPID)})
		return
	}
	changed(true)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	open := false
	err := h.ServeHTTP(lctx, hello, func(l HTTPListener) {
		l.ClientPID, l.AgentID, l.Project = hello.ClientPID, hello.AgentID, hello.Project
		if l.Since == "" {
			l.Since = time.Now().UTC().Format(time.RFC3339)
		}
		ls.opened(key, l)
		b, _ := json.Marshal(l)
		if !reply(Welcome{OK: true, Status: b}) {
			cancel()
			return
		}
		open = true
		logf("HTTP listener %s opened for cairn serve --http (pid %d)", l.URL, hello.ClientPID)
		// The connection is the listener's life: its owner sends nothing
		// more, so any end of reading — its close, its death — ends it.
		go func() { _, _ = io.Copy(io.Discard, r); cancel() }()
	})
	ls.release(key)
	changed(false)
	if !open {
		if err == nil {
			err = errors.New("ERR_INIT_FAILED: the daemon stopped before the HTTP listener opened")
		}
		reply(Welcome{OK: false, Error: err.Error()})
		return
	}
	logf("HTTP listener on %s closed (%v)", hello.Addr, err)
	if err != nil {
		b, _ := json.Marshal(httpClosed{Error: err.Error()})
		_, _ = conn.Write(append(b, '\n'))
	}
}

// ErrDaemonStopped reports that the daemon holding a listener stopped on
// purpose (cairn stop).
var ErrDaemonStopped = errors.New("the cairn daemon was stopped")

// ErrDaemonLost reports that the daemon holding a listener died.
var ErrDaemonLost = errors.New("the cairn daemon was lost")

// HTTPHold is an HTTP listener held open in the daemon by this process.
type HTTPHold struct {
	Listener  HTTPListener
	DaemonPID int

	p    Paths
	conn net.Conn
	r    *bufio.Reader
}

// OpenHTTP asks the daemon of p — started with start when none answers —
// to open the HTTP listener hello describes (Control, Addr, NoAuth and the
// session's settings). The listener lives until Close, or until this
// process ends.
func OpenHTTP(ctx context.Context, p Paths, hello Hello, start Starter, timeout time.Duration) (*HTTPHold, error) {
	hello.Control = ControlHTTP
	conn, r, w, err := Connect(ctx, p, hello, start, timeout)
	if err != nil {
		if !w.OK && w.Error != "" {
			return nil, fmt.Errorf("%w: %s", ErrRefused, w.Error)
		}
		return nil, err
	}
	var l HTTPListener
	if err := json.Unmarshal(w.Status, &l); err != nil || l.URL == "" {
		conn.Close()
		return nil, fmt.Errorf("the cairn daemon (pid %d) answered the HTTP request with %q", w.DaemonPID, w.Status)
	}
	return &HTTPHold{Listener: l, DaemonPID: w.DaemonPID, p: p, conn: conn, r: r}, nil
}

// Wait holds the listener until ctx ends or the daemon closes it. When ctx
// ends it closes the listener and waits, up to grace, for the daemon to
// confirm, so that the port is closed when Wait returns nil. Otherwise it
// says why the listener closed: the daemon's error, ErrDaemonStopped or
// ErrDaemonLost.
func (hd *HTTPHold) Wait(ctx context.Context, grace time.Duration) error {
	ended := make(chan error, 1)
	go func() {
		line, err := hd.r.ReadBytes('\n')
		var c httpClosed
		if err == nil && json.Unmarshal(line, &c) == nil && c.Error != "" {
			ended <- errors.New(c.Error)
			return
		}
		ended <- nil
	}()
	defer hd.conn.Close()
	select {
	case <-ctx.Done():
		hd.closeWrite()
		select {
		case <-ended:
		case <-time.After(grace):
		}
		return nil
	case err := <-ended:
		if err != nil {
			return fmt.Errorf("the cairn daemon (pid %d) closed the HTTP listener on %s: %w", hd.DaemonPID, hd.Listener.Addr, err)
		}
		if StoppedOnPurpose(hd.p, hd.DaemonPID) {
			return fmt.Errorf("%w (pid %d), closing the HTTP listener on %s", ErrDaemonStopped, hd.DaemonPID, hd.Listener.Addr)
		}
		return fmt.Errorf("%w (pid %d) with the HTTP listener on %s", ErrDaemonLost, hd.DaemonPID, hd.Listener.Addr)
	}
}

// Close closes the listener without waiting.
func (hd *HTTPHold) Close() error { return hd.conn.Close() }

// closeWrite tells the daemon this process is done with the listener while
// still reading its last word.
func (hd *HTTPHold) closeWrite() {
	if uc, ok := hd.conn.(*net.UnixConn); ok {
		if uc.CloseWrite() == nil {
			return
		}
	}
	_ = hd.conn.Close()
}
