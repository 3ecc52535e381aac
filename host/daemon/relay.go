package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/cairn-mcp/cairn/host/internal/jsonl"
	"github.com/cairn-mcp/cairn/host/internal/rpcid"
	"github.com/cairn-mcp/cairn/sdk/telemetry"
)

// RelayConfig tunes RunRelay.
type RelayConfig struct {
	Paths Paths
	// Hello is the session's hello; RunRelay sets Relay, SessionKey (when
	// empty), Resume and Replay itself.
	Hello Hello
	// Start launches a daemon when none answers.
	Start Starter
	// Timeout bounds finding or starting the daemon once.
	Timeout time.Duration
	// Stderr receives the daemon's warnings and log lines for this session.
	Stderr io.Writer
	// MaxMessage bounds one message from the client (checked while
	// reading; a longer one is answered with a JSON-RPC error).
	MaxMessage int
	// Attempts is how many consecutive failed starts end the relay
	// (default 5); after the client closed its input it also bounds how
	// often a lost daemon is resumed for the calls still running.
	Attempts int
	// Drain bounds how long the relay waits, once the client closed its
	// input, for the calls still running (default DefaultDrain); then it
	// answers them with an error and exits.
	Drain time.Duration
}

// DefaultDrain is how long a relay whose client closed its input waits for
// the calls still running: long enough for a slow tool, short enough that
// a relay never outlives its client for long.
const DefaultDrain = 2 * time.Minute

// ErrRefused wraps the daemon's refusal of a session's settings.
var ErrRefused = errors.New("the cairn daemon refused this session")

// RunRelay relays an MCP session between in/out and the daemon of
// cfg.Paths, and keeps it alive across the daemon's death: it starts a
// fresh daemon, resumes the session with the client's original initialize,
// and sends again every request still waiting for its answer, marked as a
// replay so the daemon applies each write at most once (docs/decisions.md D21).
func RunRelay(ctx context.Context, cfg RelayConfig, in io.Reader, out io.Writer) error {
	if cfg.Attempts <= 0 {
		cfg.Attempts = 5
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 8 << 20
	}
	if cfg.Drain <= 0 {
		cfg.Drain = DefaultDrain
	}
	cfg.Hello.Relay = 1
	if cfg.Hello.SessionKey == "" {
		cfg.Hello.SessionKey = newSessionKey()
	}
	r := &relay{cfg: cfg, out: out, inflight: map[string]pendingCall{}, internal: map[string]chan struct{}{}}
	if err := r.connect(ctx, false); err != nil {
		return err
	}
	return r.run(ctx, in)
}

type relay struct {
	cfg RelayConfig
	out io.Writer
	omu sync.Mutex // serialises writes to out

	mu       sync.Mutex // guards everything below
	conn     net.Conn
	gen      int
	inflight map[string]pendingCall // idKey → the request, until answered
	order    []string               // idKeys in the order they were sent
	// The session's state, replayed on a fresh daemon before anything else.
	initialize  []byte
	initialized []byte
	setLevel    []byte
	subscribes  [][]byte
	// internal idKeys of requests the relay sends itself while resuming;
	// their answers are swallowed and signalled.
	internal map[string]chan struct{}
	seq      int
	// stopped: the daemon stopped on purpose (cairn stop, idle); the relay
	// reconnects only when the client next sends something.
	stopped   bool
	daemonPID int
	eof       bool
	lost      chan struct{} // closed when the current connection is lost
	// spans are the relay's spans of the calls in flight, by idKey; nil
	// unless the relay exports traces (relay_trace.go).
	spans map[string]trace.Span
	// dropped counts answers for requests already answered (a daemon
	// that died after writing an answer is sent the request again; its
	// second answer must not reach the client).
	dropped int
}

// pendingCall is a request sent to the daemon and not yet answered.
type pendingCall struct {
	id   json.RawMessage // as the client wrote it
	line []byte
}

// connect dials (or starts) the daemon and, when resuming, restores the
// session on it. It holds r.mu for the whole exchange so the client's
// messages wait until the session is whole again.
func (r *relay) connect(ctx context.Context, resume bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if resume && r.conn != nil {
		// The client's reader and the run loop both resume a lost
		// session; whichever came second finds it done.
		return nil
	}
	var lastErr error
	for attempt := 0; attempt < r.cfg.Attempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
			}
		}
		hello := r.cfg.Hello
		hello.Resume = resume
		if resume {
			hello.Replay = r.replayIDsLocked()
		}
		conn, br, w, err := Connect(ctx, r.cfg.Paths, hello, r.cfg.Start, r.cfg.Timeout)
		if err != nil {
			if !w.OK && w.Error != "" {
				return fmt.Errorf("%w: %s", ErrRefused, w.Error)
			}
			var se *StartError
			if errors.As(err, &se) {
				return se
			}
			lastErr = err
			fmt.Fprintf(r.cfg.Stderr, "cairn: cannot reach the daemon (attempt %d of %d): %v\n", attempt+1, r.cfg.Attempts, err)
			continue
		}
		for _, warn := range w.Warnings {
			fmt.Fprintf(r.cfg.Stderr, "cairn: %s\n", warn)
		}
		if resume {
			fmt.Fprintf(r.cfg.Stderr, "cairn: the daemon was lost; session resumed on daemon pid %d, replaying %d request(s)\n", w.DaemonPID, len(r.order))
		}
		r.gen++
		r.conn, r.stopped, r.daemonPID = conn, false, w.DaemonPID
		r.lost = make(chan struct{})
		go r.readDaemon(br, r.gen)
		if resume {
			if err := r.restoreLocked(ctx); err != nil {
				lastErr = err
				conn.Close()
				continue
			}
		}
		return nil
	}
	return fmt.Errorf("gave up after %d attempts to reach the cairn daemon of %s: %v (its log is %s)", r.cfg.Attempts, r.cfg.Paths.DataDir, lastErr, r.cfg.Paths.Log)
}

// restoreLocked replays the session's initialize (waiting for its answer),
// its notifications and settings, then every unanswered request.
func (r *relay) restoreLocked(ctx context.Context) error {
	send := func(line []byte) error {
		_, err := r.conn.Write(line)
		return err
	}
	// The requests to replay are those the hello named. While this waits
	// for the initialize's answer the lock is free, and the client's
	// reader writes its next requests straight to the new daemon: sent
	// again below, one would reach the daemon twice under its id, and the
	// second is refused as a request whose id is in flight
	// (docs/decisions.md D42).
	replay := append([]string(nil), r.order...)
	if r.initialize != nil {
		line, done, err := r.internalLocked(r.initialize)
		if err != nil {
			return err
		}
		if err := send(line); err != nil {
			return err
		}
		lost := r.lost
		r.mu.Unlock()
		var werr error
		select {
		case <-done:
		case <-lost:
			werr = errors.New("the daemon closed the session while it was being resumed")
		case <-ctx.Done():
			werr = ctx.Err()
		case <-time.After(r.cfg.Timeout):
			werr = errors.New("the daemon did not answer the resumed initialize")
		}
		r.mu.Lock()
		if werr != nil {
			return werr
		}
	}
	if r.initialized != nil {
		if err := send(r.initialized); err != nil {
			return err
		}
	}
	state := append([][]byte(nil), r.subscribes...)
	if r.setLevel != nil {
		state = append([][]byte{r.setLevel}, state...)
	}
	for _, l := range state {
		line, _, err := r.internalLocked(l)
		if err != nil {
			return err
		}
		if err := send(line); err != nil {
			return err
		}
	}
	for _, key := range replay {
		p, ok := r.inflight[key]
		if !ok {
			continue // answered meanwhile
		}
		if err := send(p.line); err != nil {
			return err
		}
	}
	return nil
}

// replayIDsLocked lists the raw ids of the requests a resume sends again.
func (r *relay) replayIDsLocked() []string {
	ids := make([]string, len(r.order))
	for i, key := range r.order {
		ids[i] = string(r.inflight[key].id)
	}
	return ids
}

// internalLocked rewrites a request's id to one of the relay's own, whose
// answer is swallowed.
func (r *relay) internalLocked(line []byte) ([]byte, chan struct{}, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, err
	}
	r.seq++
	id := fmt.Sprintf("cairn-relay-%d", r.seq)
	m["id"] = json.RawMessage(strconv.Quote(id))
	b, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	r.internal["s"+id] = done
	return append(b, '\n'), done, nil
}

// readDaemon copies the daemon's messages to the client, diverting log
// lines to stderr and swallowing answers to the relay's own requests.
func (r *relay) readDaemon(br *bufio.Reader, gen int) {
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			// A partial line is a message the daemon died writing: it is
			// not delivered; its request is still in flight and replays.
			r.mu.Lock()
			if r.gen == gen {
				r.conn.Close()
				r.conn = nil
				close(r.lost)
			}
			r.mu.Unlock()
			return
		}
		probe, ok := probeDaemonLine(line)
		if !ok {
			continue
		}
		switch {
		case probe.Log != nil:
			fmt.Fprintln(r.cfg.Stderr, *probe.Log)
			continue
		case len(probe.ID) > 0 && probe.Method == "":
			key, valid := rpcid.Key(probe.ID)
			if !valid {
				break // id null: the daemon refused a malformed request
			}
			r.mu.Lock()
			done, internal := r.internal[key]
			answered := false
			if internal {
				delete(r.internal, key)
				close(done)
			} else {
				answered = !r.forgetLocked(key)
				if answered {
					r.dropped++
				}
			}
			r.mu.Unlock()
			if internal || answered {
				// Exactly one answer per request (docs/decisions.md
				// D32): a request replayed on a fresh daemon may be
				// answered by both.
				continue
			}
		}
		r.write(line)
	}
}

// forgetLocked ends the wait for a request; false when it was not waiting
// (already answered).
func (r *relay) forgetLocked(key string) bool {
	if _, ok := r.inflight[key]; !ok {
		return false
	}
	r.endSpanLocked(key)
	delete(r.inflight, key)
	for i, o := range r.order {
		if o == key {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	return true
}

func (r *relay) write(line []byte) {
	r.omu.Lock()
	defer r.omu.Unlock()
	_, _ = r.out.Write(line)
}

// run reads the client's messages and sends them to the daemon until the
// client ends the session and every request is answered. The goroutine
// reading the client writes each message to the daemon itself: no hand-off
// to another goroutine on a call's way in.
func (r *relay) run(ctx context.Context, in io.Reader) error {
	readErr := make(chan error, 1)
	sendErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := jsonl.ReadLine(br, r.cfg.MaxMessage)
			if tooLong {
				r.write(jsonl.TooLongError(r.cfg.MaxMessage))
			} else if len(bytes.TrimSpace(line)) > 0 {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if ctx.Err() != nil {
					return
				}
				if err := r.send(ctx, line); err != nil {
					r.failPending(err)
					sendErr <- err
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	// Once the client closed its input, the calls still running get
	// cfg.Drain and cfg.Attempts resumes of a lost daemon to finish; then
	// they are answered with an error and the relay exits, so a relay never
	// outlives its client for long nor reconnects in a loop (D32).
	var drain <-chan time.Time
	resumesAfterEOF := 0
	for {
		r.mu.Lock()
		lost, stopped, eof, connected := r.lost, r.stopped, r.eof, r.conn != nil
		pending := len(r.order)
		r.mu.Unlock()
		if eof && (pending == 0 || stopped) {
			r.closeWrite()
			if connected && lost != nil {
				// The daemon ends its side once it has written every
				// answer, refusals of malformed requests included.
				select {
				case <-lost:
				case <-drain:
				case <-ctx.Done():
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			r.closeConn()
			return nil
		case err := <-sendErr:
			return err
		case <-drain:
			r.answerPending(fmt.Sprintf("the client closed its input and this call was still running after %s; the relay stopped waiting for it", r.cfg.Drain),
				fmt.Sprintf("the client closed its input; %d call(s) still running after %s were abandoned", pending, r.cfg.Drain))
			r.closeConn()
			return nil
		case <-readErr:
			r.mu.Lock()
			r.eof = true
			if r.conn != nil {
				if uc, ok := r.conn.(*net.UnixConn); ok {
					_ = uc.CloseWrite()
				}
			}
			r.mu.Unlock()
			readErr = nil // a nil channel is never selected again
			drain = time.After(r.cfg.Drain)
		case <-lost:
			r.mu.Lock()
			if r.conn != nil { // send has already resumed the session
				r.mu.Unlock()
				continue
			}
			stopped := r.stopped || StoppedOnPurpose(r.cfg.Paths, r.daemonPID)
			r.stopped = stopped
			pending := len(r.order)
			r.mu.Unlock()
			if r.isEOF() && pending == 0 {
				return nil
			}
			if stopped && pending == 0 {
				// Reconnect when the client next speaks.
				r.mu.Lock()
				r.lost = nil
				r.mu.Unlock()
				continue
			}
			if r.isEOF() {
				if resumesAfterEOF++; resumesAfterEOF > r.cfg.Attempts {
					r.answerPending("the cairn daemon was lost repeatedly after the client closed its input; this call's outcome is unknown",
						fmt.Sprintf("the daemon was lost %d times after the client closed its input; %d call(s) abandoned", resumesAfterEOF, pending))
					return nil
				}
			}
			if err := r.connect(ctx, true); err != nil {
				r.failPending(err)
				return err
			}
			if r.isEOF() {
				r.closeWrite()
			}
		}
	}
}

func (r *relay) isEOF() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eof
}

func (r *relay) closeWrite() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		if uc, ok := r.conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}
}

func (r *relay) closeConn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		r.conn.Close()
	}
}

// send records a client message and writes it to the daemon, resuming the
// session first when the daemon is gone.
func (r *relay) send(ctx context.Context, line []byte) error {
	probe := probeClientLine(line)
	if refusal := r.refuseInFlight(probe); refusal != nil {
		r.write(refusal)
		return nil
	}
	traced := telemetry.On()
	for {
		r.mu.Lock()
		conn := r.conn
		if conn == nil {
			r.mu.Unlock()
			if err := r.connect(ctx, true); err != nil {
				return err
			}
			continue
		}
		if traced && probe.Method == "tools/call" {
			// Once: a resume sends the traced line again.
			line, traced = r.traceCallLocked(probe, line), false
		}
		r.track(probe, line)
		_, err := conn.Write(line)
		r.mu.Unlock()
		if err == nil {
			return nil
		}
		// The daemon is gone: the reader sees it too; the request is
		// tracked and is replayed by the resume.
		r.mu.Lock()
		if r.conn == conn {
			r.conn.Close()
			r.conn = nil
			r.gen++
			close(r.lost)
		}
		r.mu.Unlock()
		return r.connect(ctx, true)
	}
}

// refuseInFlight is the answer to a request whose id an earlier request of
// the session still holds: -32600 naming the id, written at once; the
// request never reaches the daemon, so it is neither run nor merged with
// the first, whose answer is the only one the id gets (docs/decisions.md
// D42). nil for anything else. Only the client's reader adds ids, so the
// id cannot be taken between this check and track.
func (r *relay) refuseInFlight(probe clientLine) []byte {
	key, valid := rpcid.Key(probe.ID)
	if !valid || len(probe.RawMethod) == 0 {
		return nil
	}
	r.mu.Lock()
	_, held := r.inflight[key]
	r.mu.Unlock()
	if !held {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(bytes.TrimSpace(probe.ID)), "error": map[string]any{
		"code": -32600, "message": rpcid.InFlightMessage(probe.ID),
	}})
	return append(b, '\n')
}

// track remembers what a resume must replay (r.mu held).
func (r *relay) track(probe clientLine, line []byte) {
	switch probe.Method {
	case "initialize":
		r.initialize = line
	case "notifications/initialized":
		r.initialized = line
	case "logging/setLevel":
		r.setLevel = line
	case "resources/subscribe", "resources/unsubscribe":
		r.subscribes = append(r.subscribes, line)
	}
	if key, valid := rpcid.Key(probe.ID); valid && len(probe.RawMethod) > 0 {
		// A resume sends the same line again; a new request with an id
		// in flight never gets here (refuseInFlight).
		if _, again := r.inflight[key]; !again {
			r.order = append(r.order, key)
		}
		r.inflight[key] = pendingCall{id: probe.ID, line: line}
	}
}

// failPending answers every request still in flight with an error, so the
// client is never left waiting when the relay gives up.
func (r *relay) failPending(cause error) {
	r.answerPending("the cairn daemon is unavailable: "+cause.Error(), cause.Error())
}

// answerPending answers every request still in flight with message, once:
// they are no longer tracked, so an answer the daemon sends later is
// dropped. note goes to stderr.
func (r *relay) answerPending(message, note string) {
	r.mu.Lock()
	var ids []json.RawMessage
	for _, key := range r.order {
		ids = append(ids, r.inflight[key].id)
		r.endSpanLocked(key)
		delete(r.inflight, key)
	}
	r.order = nil
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Stderr, "cairn: %s\n", note)
	for _, id := range ids {
		msg := map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
			"code": -32603, "message": message,
		}}
		b, _ := json.Marshal(msg)
		r.write(append(b, '\n'))
	}
}
