// Package stdio is the byte-stream transport: one MCP session of
// newline-delimited JSON-RPC over a stream, this process's stdio or a
// relay's Unix socket connection. It reads each message within its
// session's limits, answers a malformed one, runs requests concurrently and
// writes every answer once, in order with the notifications sent before it.
// What a message means is the Handler's (the host's) to say.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/internal/jsonl"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/workers"
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
	// calls cancels the running tool calls by id (rpcid.Key), for a
	// notifications/cancelled: the calls Handler.CallTool answers never
	// reach mcp-go, which cancels the others.
	calls sync.Map
	// inflight holds the ids of the requests not yet answered.
	inflight jsonrpc.InFlight

	mu     sync.Mutex
	closed bool
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

// RelayLog implements clientsession.Listener: a relayed session's line goes to
// its relay's stderr.
func (s *connSession) RelayLog(text string) {
	if s.relayLog != nil {
		s.relayLog(text)
	}
}

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

// Listen records the id of the open subscriptions/listen request (nil when
// it ends); notifications on its stream carry it.
func (s *connSession) Listen(id any) {
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

// Handler is what a session needs of the host it serves.
type Handler interface {
	// Enter is called as a session starts (on PostgreSQL the host joins
	// the cluster bus for it); leave is called as it ends.
	Enter(ctx context.Context) (leave func())
	// Register adds sess to the MCP server and returns the context its
	// messages are handled in and the func that removes it.
	Register(ctx context.Context, sess server.ClientSession) (context.Context, func(), error)
	// Serving is called once the session can take notifications: it
	// hears the server's warnings and its project is announced; done is
	// called as it ends.
	Serving(sess clientsession.Listener, settings *clientsession.Settings) (done func())
	// HandleMessage answers one message (nil for a notification).
	HandleMessage(ctx context.Context, msg []byte) mcp.JSONRPCMessage
	// LiftArguments takes a tools/call's arguments out of msg, for the tool
	// handler to take from the context (docs/decisions.md D33).
	LiftArguments(ctx context.Context, p jsonrpc.Probe, msg []byte) (context.Context, []byte)
	// RefuseSubscription answers a resources/subscribe to a URI that does
	// not exist; false for any other message.
	RefuseSubscription(ctx context.Context, msg []byte) (mcp.JSONRPCError, bool)
	// AnswerExtension answers a request of an extension the host serves
	// that mcp-go does not know (the skills extension); false for any
	// other message.
	AnswerExtension(ctx context.Context, method string, msg []byte) (mcp.JSONRPCMessage, bool)
	// CallTool answers a tools/call the probe scanned without a second
	// decode of the message; false hands it to HandleMessage. line is the
	// message as read, which the probe's spans index (LiftArguments left
	// it whole). A notifications/cancelled for its id cancels ctx.
	CallTool(ctx context.Context, p jsonrpc.Probe, line []byte) (mcp.JSONRPCMessage, bool)
}

// Server serves the byte-stream sessions of one host.
type Server struct {
	h   Handler
	log hclog.Logger
	// requests runs the requests of every session.
	requests workers.Pool
}

// New returns a Server handing its sessions' messages to h.
func New(h Handler, log hclog.Logger) *Server {
	return &Server{h: h, log: log, requests: workers.New(nil)}
}

// Options tune Serve.
type Options struct {
	// Session holds the session's settings.
	Session *clientsession.Settings
	// Replayed lists JSON-RPC ids (as JSON text) that a relay sends again
	// after it lost the daemon: those calls may already have run.
	Replayed map[string]bool
	// Relayed sessions get log lines about the workspace on their relay's
	// stderr (a {"cairn_log": …} line the relay diverts).
	Relayed bool
	// MaxMessage bounds one JSON-RPC message (default clientsession.DefaultMaxMessage).
	MaxMessage int
	// MaxConcurrentCalls bounds the tool calls one session runs at once;
	// more wait in order (default clientsession.DefaultMaxConcurrentCalls).
	MaxConcurrentCalls int
}

// RelayLogLine is the daemon-to-relay line carrying text for the relay's
// stderr; it is never a JSON-RPC message, so the relay can divert it.
type RelayLogLine struct {
	Text string `json:"cairn_log"`
}

// Serve serves one MCP session of newline-delimited JSON-RPC over r and w
// until the peer closes it or ctx ends. Requests run concurrently, so a slow
// tool call does not hold up a cancellation or a ping; tool calls beyond the
// session's bound wait in order.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = clientsession.DefaultMaxMessage
	}
	if opts.MaxConcurrentCalls <= 0 {
		opts.MaxConcurrentCalls = clientsession.DefaultMaxConcurrentCalls
	}
	settings := opts.Session
	if settings == nil {
		return errors.New("stdio: a session needs its settings")
	}
	defer s.h.Enter(ctx)()
	sess := &connSession{
		id:            "conn-" + strconv.FormatUint(connSeq.Add(1), 10),
		notifications: make(chan mcp.JSONRPCNotification, 256),
		key:           settings.Key,
	}
	if sess.key == "" {
		sess.key = clientsession.NewKey()
	}
	ctx, unregister, err := s.h.Register(ctx, sess)
	if err != nil {
		return err
	}
	defer unregister()
	ctx = clientsession.With(ctx, settings)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// This goroutine writes the notifications and the lines queued on out,
	// each after every notification already queued: a notification sent
	// while a request ran (its progress) always precedes that request's
	// result. A tool call about which nothing else was sent skips the
	// queue: the goroutine that ran it writes its answer (sessionWriter).
	sw := &sessionWriter{w: w, notes: sess.notifications, tag: sess.tagged, onFail: cancel, log: s.log.With("session", sess.id)}
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
	done := s.h.Serving(sess, settings)
	defer func() {
		done()
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
			s.handleLine(ctx, sess, line, opts.Replayed, calls, work, respond, sw.respond)
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
func (s *Server) handleLine(ctx context.Context, c *connSession, line []byte, replayed map[string]bool, calls chan struct{}, wg *sync.WaitGroup, respond, answer func(any)) {
	probe, refusal, handled := jsonrpc.ProbeMessage(line)
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
		c.modern.Store(true)
	}
	switch {
	case probe.Method == "":
		// A response to a server request (sampling, elicitation).
		c.requests.deliver(line)
		return
	case len(probe.ID) == 0:
		// Notifications (initialized, cancelled) are handled in order, on
		// the read loop.
		if probe.Method == string(mcp.MethodNotificationCancelled) {
			c.cancelCall(line)
		}
		if resp := s.h.HandleMessage(ctx, line); resp != nil {
			respond(resp)
		}
		return
	}
	// A request whose id the session still holds is refused at once,
	// never merged with the one holding it (docs/decisions.md D42). The
	// id is freed just before its answer is queued: a client that reads
	// the answer and reuses the id is never refused.
	hold, inUse, free := c.inflight.Enter(probe.ID)
	if !free {
		respond(inUse)
		return
	}
	if probe.Method == string(mcp.MethodInitialize) {
		// On the read loop too: a request read after initialize then
		// sees the client's name and capabilities (D4), even from a
		// client that does not wait for the answer.
		resp := s.h.HandleMessage(ctx, line)
		hold.Release()
		if resp != nil {
			respond(resp)
			if _, failed := resp.(mcp.JSONRPCError); !failed {
				for _, n := range clientsession.SettingsWarnings(clientsession.From(ctx, nil)) {
					respond(n)
				}
			}
		}
		return
	}
	id := string(probe.ID)
	notified := new(atomic.Bool)
	cctx := clientsession.WithCall(ctx, clientsession.Call{ID: id, Key: c.key, Replay: replayed[id], Notified: notified})
	// line is this message's own (jsonl.ReadLine allocates each); a
	// tools/call's arguments stay in it, raw, for the tool handler.
	cctx, msg := s.h.LiftArguments(cctx, probe, line)
	limited := probe.Method == string(mcp.MethodToolsCall)
	untrack := func() {}
	if limited {
		cctx, untrack = c.trackCall(cctx, probe.ID)
	}
	wg.Add(1)
	s.requests.Run(func() {
		defer wg.Done()
		resp, direct := s.runRequest(ctx, cctx, probe, line, msg, limited, calls, untrack)
		// The id is free before its answer is on its way, so a client
		// that reads the answer and reuses the id is never refused; a
		// request answered with nothing (the session ended) frees it too.
		hold.Release()
		switch {
		case resp == nil:
		case direct && !notified.Load():
			// Nothing was said about this call but its answer: the
			// goroutine that ran it writes it.
			answer(resp)
		default:
			respond(resp)
		}
	})
}

// runRequest runs one request of a session and returns its answer (nil:
// none); direct reports a tool call's answer, which the goroutine that ran
// it may write itself.
func (s *Server) runRequest(ctx, cctx context.Context, probe jsonrpc.Probe, line, msg []byte, limited bool, calls chan struct{}, untrack func()) (resp mcp.JSONRPCMessage, direct bool) {
	if limited {
		defer untrack()
		select {
		case calls <- struct{}{}:
			defer func() { <-calls }()
		case <-ctx.Done():
			return nil, false
		}
		if resp, ok := s.h.CallTool(cctx, probe, line); ok {
			return resp, true
		}
	}
	if probe.Method == string(mcp.MethodResourcesSubscribe) {
		if e, refused := s.h.RefuseSubscription(cctx, msg); refused {
			return e, false
		}
	}
	if ext, ok := s.h.AnswerExtension(cctx, probe.Method, msg); ok {
		return ext, false
	}
	resp = s.h.HandleMessage(cctx, msg)
	if resp == nil {
		return nil, false
	}
	if limited {
		return resp, true
	}
	return jsonrpc.InvalidParams(probe.Method, resp), false
}
