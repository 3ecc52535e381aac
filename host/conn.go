package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/internal/jsonl"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// connSeq numbers connection sessions for their ids.
var connSeq atomic.Uint64

// connSession is one MCP session over a byte stream: a relay's Unix socket
// connection, or this process's stdio. mcp-go's stdio server keeps a single
// package-level session and reads lines without bound, so cairn runs its own
// loop with a session per stream and a limit on every message.
type connSession struct {
	id            string
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	clientInfo    atomic.Value // mcp.Implementation
	clientCaps    atomic.Value // mcp.ClientCapabilities
	logLevel      atomic.Value // mcp.LoggingLevel; unset until logging/setLevel
	settings      *SessionSettings
	// key, with a request's JSON-RPC id, is a call's idempotency key: the
	// relay's session key, which outlives a daemon, else one of its own.
	key string
	// modern is set once the client spoke protocol 2026-07-28, where every
	// notification is opt-in through subscriptions/listen.
	modern atomic.Bool
	// subscription is the filter of the open subscriptions/listen request
	// and listenID that request's id (nil when none is open).
	subMu        sync.RWMutex
	subscription mcp.SubscriptionFilter
	listenID     any
	// relayLog, when set, sends a line to the relay's stderr.
	relayLog func(text string)
	// requests carries sampling and elicitation to the client.
	requests connRequests
	mu       sync.Mutex
	closed   bool
}

func (s *connSession) SessionID() string { return s.id }
func (s *connSession) Initialize()       { s.initialized.Store(true) }
func (s *connSession) Initialized() bool { return s.initialized.Load() }
func (s *connSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notifications
}

func (s *connSession) GetClientInfo() mcp.Implementation {
	v, _ := s.clientInfo.Load().(mcp.Implementation)
	return v
}
func (s *connSession) SetClientInfo(ci mcp.Implementation) { s.clientInfo.Store(ci) }
func (s *connSession) GetClientCapabilities() mcp.ClientCapabilities {
	v, _ := s.clientCaps.Load().(mcp.ClientCapabilities)
	return v
}
func (s *connSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.clientCaps.Store(c) }

// SetLogLevel and GetLogLevel implement MCP logging per session.
func (s *connSession) SetLogLevel(l mcp.LoggingLevel) { s.logLevel.Store(l) }
func (s *connSession) GetLogLevel() mcp.LoggingLevel {
	v, _ := s.logLevel.Load().(mcp.LoggingLevel)
	return v
}

// SetSubscriptionFilter and SubscriptionFilter let mcp-go filter broadcasts
// (list_changed) for a 2026-07-28 session: it hears only what its open
// subscriptions/listen request asked for, and nothing while none is open.
func (s *connSession) SetSubscriptionFilter(f mcp.SubscriptionFilter) {
	s.subMu.Lock()
	s.subscription = f
	s.subMu.Unlock()
}

func (s *connSession) SubscriptionFilter() (mcp.SubscriptionFilter, bool) {
	s.subMu.RLock()
	defer s.subMu.RUnlock()
	return s.subscription, s.modern.Load() || s.listenID != nil
}

// listen records the id of the open subscriptions/listen request (nil when
// it ends); notifications on its stream carry it.
func (s *connSession) listen(id any) {
	s.subMu.Lock()
	s.listenID = id
	s.subMu.Unlock()
}

// tagged marks a notification that belongs to the session's listen stream
// with that stream's id, as protocol 2026-07-28 requires.
func (s *connSession) tagged(n mcp.JSONRPCNotification) mcp.JSONRPCNotification {
	switch n.Method {
	case mcp.MethodNotificationToolsListChanged, mcp.MethodNotificationPromptsListChanged,
		mcp.MethodNotificationResourcesListChanged:
	default:
		return n
	}
	s.subMu.RLock()
	id := s.listenID
	s.subMu.RUnlock()
	if id == nil {
		return n
	}
	meta := map[string]any{mcp.MetaKeySubscriptionID: id}
	for k, v := range n.Params.Meta {
		meta[k] = v
	}
	n.Params.Meta = meta
	return n
}

// Default per-session limits (D21); CAIRN_MAX_MESSAGE and
// CAIRN_MAX_CONCURRENT_CALLS override them.
const (
	DefaultMaxMessage         = 8 << 20
	DefaultMaxConcurrentCalls = 16
)

// ConnOptions tune ServeConn.
type ConnOptions struct {
	// Session holds the session's own settings; nil takes the host's.
	Session *SessionSettings
	// Replayed lists JSON-RPC ids (as JSON text) that a relay sends again
	// after it lost the daemon: those calls may already have run.
	Replayed map[string]bool
	// Relayed sessions get log lines about the workspace on their relay's
	// stderr (a {"cairn_log": …} line the relay diverts).
	Relayed bool
	// MaxMessage bounds one JSON-RPC message (default DefaultMaxMessage).
	MaxMessage int
	// MaxConcurrentCalls bounds the tool calls one session runs at once;
	// more wait in order (default DefaultMaxConcurrentCalls).
	MaxConcurrentCalls int
}

// RelayLogLine is the daemon-to-relay line carrying text for the relay's
// stderr; it is never a JSON-RPC message, so the relay can divert it.
type RelayLogLine struct {
	Text string `json:"cairn_log"`
}

// ServeConn serves one MCP session of newline-delimited JSON-RPC over rw
// until the peer closes it or ctx ends. Requests run concurrently, so a slow
// tool call does not hold up a cancellation or a ping; tool calls beyond the
// session's bound wait in order.
func (h *Host) ServeConn(ctx context.Context, r io.Reader, w io.Writer, opts ConnOptions) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = h.limits.maxMessage
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = h.limits.maxCalls
	}
	settings := opts.Session
	if settings == nil {
		settings = h.defaultSession
	}
	// On PostgreSQL this connection's events reach the other servers and
	// theirs reach it; without the database it still serves, degraded.
	if _, leave, err := h.enterCluster(ctx); err != nil {
		h.log.Warn("serving without the cluster bus", "error", err)
	} else {
		defer leave()
	}
	sess := &connSession{
		id:            "conn-" + strconv.FormatUint(connSeq.Add(1), 10),
		notifications: make(chan mcp.JSONRPCNotification, 256),
		settings:      settings,
		key:           settings.Key,
	}
	if sess.key == "" {
		sess.key = newKey()
	}
	if err := h.mcp.RegisterSession(ctx, sess); err != nil {
		return err
	}
	defer h.mcp.UnregisterSession(context.Background(), sess.id)
	ctx = WithSession(h.mcp.WithContext(ctx, sess), settings)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// This goroutine writes the notifications and the lines queued on out,
	// each after every notification already queued: a notification sent
	// while a request ran (its progress) always precedes that request's
	// result. A tool call about which nothing else was sent skips the
	// queue: the goroutine that ran it writes its answer (sessionWriter).
	sw := &sessionWriter{w: w, notes: sess.notifications, tag: sess.tagged, onFail: cancel, log: h.log.With("session", sess.id)}
	out := make(chan any, 64)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			select {
			case n := <-sess.notifications:
				sw.notify(n)
			case v, ok := <-out:
				if !ok {
					sw.flush()
					return
				}
				sw.respond(v)
			}
		}
	}()
	respond := func(v any) { out <- v }
	if opts.Relayed {
		sess.relayLog = func(text string) {
			sess.mu.Lock()
			defer sess.mu.Unlock()
			if sess.closed {
				return
			}
			select {
			case out <- RelayLogLine{Text: text}:
			default: // a session too busy to take a log line loses it
			}
		}
	}
	sess.requests.send = func(v any) bool {
		sess.mu.Lock()
		defer sess.mu.Unlock()
		if sess.closed {
			return false
		}
		out <- v
		return true
	}
	h.announceProject(settings)
	h.logs.add(sess)
	defer func() {
		h.logs.remove(sess)
		sess.mu.Lock()
		sess.closed = true
		sess.mu.Unlock()
		close(out)
		<-writerDone
	}()

	calls := make(chan struct{}, opts.MaxConcurrentCalls)
	var wg sync.WaitGroup
	// Requests in flight when the client stops sending still get their
	// answers: wait for them before the writer closes.
	defer wg.Wait()
	budget := newMessageBudget(opts.MaxMessage, &wg)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := jsonl.ReadLine(br, opts.MaxMessage)
		switch {
		case tooLong:
			respond(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_REQUEST,
				jsonl.TooLongMessage(opts.MaxMessage), nil)})
		case len(bytes.TrimSpace(line)) > 0:
			work, start, ok := budget.hold(ctx, len(line))
			if !ok {
				return nil
			}
			h.handleLine(ctx, line, opts.Replayed, calls, work, respond, sw.respond)
			start()
		}
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// handleLine dispatches one JSON-RPC message of a session.
//
// respond queues a line for the session's writer, which writes every
// notification queued before it first; answer writes a tool call's answer
// at once, after the notifications already queued.
func (h *Host) handleLine(ctx context.Context, line []byte, replayed map[string]bool, calls chan struct{}, wg *sync.WaitGroup, respond, answer func(any)) {
	probe, refusal, handled := probeMessage(line)
	if handled {
		// Malformed: answered here, once (docs/decisions.md D32).
		if refusal != nil {
			respond(*refusal)
		}
		return
	}
	var version string
	if v := probe.Params.Meta.ProtocolVersion; len(v) > 0 && v[0] == '"' {
		_ = json.Unmarshal(v, &version)
	}
	if mcp.IsModernProtocol(version) {
		if c, ok := server.ClientSessionFromContext(ctx).(*connSession); ok {
			c.modern.Store(true)
		}
	}
	switch {
	case probe.Method == "":
		// A response to a server request (sampling, elicitation).
		if c, ok := server.ClientSessionFromContext(ctx).(*connSession); ok {
			c.requests.deliver(line)
		}
		return
	case len(probe.ID) == 0:
		// Notifications (initialized, cancelled) are handled in order, on
		// the read loop.
		if resp := h.mcp.HandleMessage(ctx, line); resp != nil {
			respond(resp)
		}
		return
	case probe.Method == string(mcp.MethodInitialize):
		// On the read loop too: a request read after initialize then
		// sees the client's name and capabilities (D4), even from a
		// client that does not wait for the answer.
		if resp := h.mcp.HandleMessage(ctx, line); resp != nil {
			respond(resp)
		}
		return
	}
	id := string(probe.ID)
	notified := new(atomic.Bool)
	cctx := context.WithValue(ctx, callMetaKey{}, callMeta{id: id, replay: replayed[id], notified: notified})
	// line is this message's own (jsonl.ReadLine allocates each); a
	// tools/call's arguments stay in it, raw, for the tool handler.
	cctx, msg := h.liftProbed(cctx, probe, line)
	limited := probe.Method == string(mcp.MethodToolsCall)
	wg.Add(1)
	h.requests.Run(func() {
		defer wg.Done()
		if limited {
			select {
			case calls <- struct{}{}:
				defer func() { <-calls }()
			case <-ctx.Done():
				return
			}
		}
		if probe.Method == string(mcp.MethodResourcesSubscribe) {
			if e, refused := h.refuseSubscription(cctx, msg); refused {
				respond(e)
				return
			}
		}
		if skills, ok := h.answerSkills(cctx, probe.Method, msg); ok {
			respond(skills)
			return
		}
		resp := h.mcp.HandleMessage(cctx, msg)
		switch {
		case resp == nil:
		case limited && !notified.Load():
			// Nothing was said about this call but its answer: the
			// goroutine that ran it writes it.
			answer(resp)
		default:
			respond(invalidParams(probe.Method, resp))
		}
	})
}

// invalidParams gives a resource read or prompt refused for its arguments
// (a plugin's 400, say an invalid sdd:// id or a missing prompt argument)
// the JSON-RPC invalid-params code: mcp-go reports every failed read or
// prompt as an internal error.
func invalidParams(method string, resp mcp.JSONRPCMessage) mcp.JSONRPCMessage {
	e, ok := resp.(mcp.JSONRPCError)
	if !ok || (method != string(mcp.MethodResourcesRead) && method != string(mcp.MethodPromptsGet)) || e.Error.Code != mcp.INTERNAL_ERROR {
		return resp
	}
	code, _, _ := strings.Cut(e.Error.Message, ":")
	if code == errs.InvalidInput || (method == string(mcp.MethodPromptsGet) && strings.HasSuffix(code, "NOT_FOUND")) {
		e.Error.Code = mcp.INVALID_PARAMS
	}
	return e
}
