package httpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/cairn-mcp/cairn/host/clientsession"
	"github.com/cairn-mcp/cairn/host/transport/jsonrpc"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// DefaultHTTPSessionIdle is how long an HTTP session lives without a
// request before it ends (CAIRN_HTTP_SESSION_IDLE).
const DefaultHTTPSessionIdle = 30 * time.Minute

// httpSessions are the MCP client sessions the HTTP transport issued,
// each named by its Mcp-Session-Id header (protocol revisions up to
// 2025-11-25; 2026-07-28 has none). Each is bound to the API key that
// opened it: the same id with another key is as unknown as an id never
// issued (404, so a session id reveals nothing to a foreign key). A
// session ends with DELETE or after idle without a request.
//
// With PostgreSQL (shared non-nil) the sessions are the cluster's: each is
// a row every server checks on every request, so a session opened on one
// server continues on another, and live holds this server's copies.
type httpSessions struct {
	mu        sync.Mutex
	live      map[string]*httpSession
	idle      time.Duration
	maxCalls  int
	now       func() time.Time
	lastSweep time.Time
	shared    *sharedSessions
	log       hclog.Logger
}

type httpSession struct {
	holder   string
	lastSeen time.Time
	// ended is cancelled when the session ends, closing its event streams.
	ended  context.Context
	cancel context.CancelFunc
	// calls bounds the tool calls the session runs at once (D21).
	calls chan struct{}
	// inflight holds the ids of the session's requests not yet answered
	// by this server (holdRequestID).
	inflight jsonrpc.InFlight
	// mirror is, on a cluster, what this server's mcp-go holds of the
	// session; requests bring it up to the shared state first.
	mirror sessionMirror
}

var errNoSession = errors.New("no such session")

func newHTTPSessions(idle time.Duration, maxCalls int) *httpSessions {
	if idle <= 0 {
		idle = DefaultHTTPSessionIdle
	}
	if maxCalls <= 0 {
		maxCalls = clientsession.DefaultMaxConcurrentCalls
	}
	return &httpSessions{live: map[string]*httpSession{}, idle: idle, maxCalls: maxCalls, now: time.Now, log: hclog.NewNullLogger()}
}

// open issues a session id bound to holder.
func (s *httpSessions) open(holder string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := "cairn-" + hex.EncodeToString(b[:])
	if s.shared != nil {
		if err := s.shared.open(id, holder); err != nil {
			// The session still works here; another server will not know it.
			s.log.Warn("session not shared with the cluster", "error", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Initialized here: mcp-go holds it from its initialize on.
	s.addLocked(id, holder).mirror.here = true
	return id
}

func (s *httpSessions) addLocked(id, holder string) *httpSession {
	now := s.now()
	if now.Sub(s.lastSweep) > s.idle/2 {
		s.sweepLocked(now)
	}
	ended, cancel := context.WithCancel(context.Background())
	sess := &httpSession{holder: holder, lastSeen: now, ended: ended, cancel: cancel, calls: make(chan struct{}, s.maxCalls)}
	s.live[id] = sess
	return sess
}

// use checks that id is a live session of holder, counts it as used and
// returns it.
func (s *httpSessions) use(id, holder string) (*httpSession, error) {
	sess, _, err := s.useState(id, holder)
	return sess, err
}

// useState is use that also returns, on a cluster, the session's shared
// state as of this request.
func (s *httpSessions) useState(id, holder string) (*httpSession, *sharedSessionState, error) {
	if s.shared != nil {
		return s.useShared(id, holder)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.live[id]
	now := s.now()
	switch {
	case !ok || sess.holder != holder:
		return nil, nil, errNoSession
	case now.Sub(sess.lastSeen) >= s.idle:
		s.endLocked(id)
		return nil, nil, errNoSession
	}
	sess.lastSeen = now
	return sess, nil, nil
}

// useShared asks the cluster's table, which decides for every server: a
// session it knows continues here, one it does not know is gone here too.
func (s *httpSessions) useShared(id, holder string) (*httpSession, *sharedSessionState, error) {
	st, found, err := s.shared.touch(id, holder)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.live[id]
	switch {
	case !found:
		if ok && sess.holder == holder {
			s.endLocked(id)
		}
		return nil, nil, errNoSession
	case ok && sess.holder == holder:
		sess.lastSeen = s.now()
		return sess, &st, nil
	case len(st.Initialize) == 0:
		// Opened but never initialized: nothing to continue from.
		return nil, nil, errNoSession
	}
	return s.addLocked(id, holder), &st, nil
}

// end ends a session: here and, on a cluster, everywhere.
func (s *httpSessions) end(id string) {
	if s.shared != nil {
		if err := s.shared.end(id); err != nil {
			s.log.Warn("session not ended in the cluster (it expires when idle)", "error", err)
		}
	}
	s.forget(id)
}

// forget ends this server's copy of a session and closes its event
// streams; on a cluster the session goes on elsewhere.
func (s *httpSessions) forget(id string) {
	s.mu.Lock()
	s.endLocked(id)
	s.mu.Unlock()
}

func (s *httpSessions) endLocked(id string) {
	if sess, ok := s.live[id]; ok {
		sess.cancel()
		delete(s.live, id)
	}
}

// count is the number of sessions not yet ended or swept.
func (s *httpSessions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

func (s *httpSessions) sweepLocked(now time.Time) {
	s.lastSweep = now
	for id, sess := range s.live {
		if now.Sub(sess.lastSeen) >= s.idle {
			s.endLocked(id)
		}
	}
}

// holderOf names whom a request's sessions belong to: its API key, or, on a
// server without keys, the one local caller.
func holderOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	if p, ok := PrincipalOf(r.Context()); ok {
		if p.KeyID != "" {
			return "key:" + p.KeyID
		}
		return "user:" + p.UserID
	}
	return ""
}

// ResolveSessionIdManager gives mcp-go the session ids of the request's
// holder; without a request (its idle sweeper, shutdown) it may end any.
func (s *httpSessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return sessionIDs{s: s, any: true}
	}
	m := sessionIDs{s: s, holder: holderOf(r)}
	m.checked, _ = r.Context().Value(checkedSessionKey{}).(string)
	m.restoring, _ = r.Context().Value(restoringSessionKey{}).(string)
	return m
}

// checkedSessionKey carries the session id guardSessions already checked
// for the request, so mcp-go's check of the same id costs nothing.
type checkedSessionKey struct{}

// restoringSessionKey carries the id of a session this server restores:
// the replayed initialize continues it instead of opening another.
type restoringSessionKey struct{}

// sessionIDs is mcp-go's view of one holder's sessions.
type sessionIDs struct {
	s         *httpSessions
	holder    string
	any       bool
	checked   string
	restoring string
}

func (m sessionIDs) Generate() string {
	if m.restoring != "" {
		return m.restoring
	}
	return m.s.open(m.holder)
}

func (m sessionIDs) Validate(id string) (bool, error) {
	if id != "" && id == m.checked {
		return false, nil
	}
	_, err := m.s.use(id, m.holder)
	return false, err
}

func (m sessionIDs) Terminate(id string) (bool, error) {
	if m.any {
		// mcp-go's idle sweep or shutdown: this server's copy ends; on a
		// cluster the session goes on elsewhere until idle there too.
		m.s.forget(id)
		return false, nil
	}
	if id == m.checked {
		m.s.end(id)
	} else if _, err := m.s.use(id, m.holder); err == nil {
		m.s.end(id)
	}
	return false, nil
}

// guardSessions wraps next so that every request of a session-based
// protocol revision names a live session of its own key, answering in the
// D3 envelope: 400 without Mcp-Session-Id, 404 for an id that was never
// issued, has ended or expired, or belongs to another key. mcp-go checks
// the same through sessionIDs; this answers first, and for GET and DELETE,
// which mcp-go lets through unchecked. A session's event stream closes when
// the session ends, its tool calls beyond CAIRN_MAX_CONCURRENT_CALLS wait
// in order, and a request whose id the session still holds is refused
// (holdRequestID), as on stdio.
func guardSessions(s *httpSessions, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		need, method, rpcID := sessionNeed(r)
		if !need {
			next.ServeHTTP(w, r)
			if s.shared != nil && r.Method == http.MethodPost {
				// An initialize mints the session id in its answer.
				s.recordInitialize(w.Header().Get(server.HeaderKeySessionID), r)
			}
			return
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			writeHTTPError(w, errs.New(400, errs.InvalidInput, "this request needs the Mcp-Session-Id header the server returned at initialize").
				With("field", server.HeaderKeySessionID))
			return
		}
		sess, st, err := s.useState(id, holderOf(r))
		if errors.Is(err, errNoSession) {
			writeHTTPError(w, errs.New(404, errs.NotFound, "no such session (it was never issued, has ended, expired after being idle, or was opened with another key): initialize a new one").
				With("field", server.HeaderKeySessionID))
			return
		}
		if err != nil {
			s.log.Warn("session check failed", "error", err)
			writeHTTPError(w, errs.New(503, errs.Unavailable, "the cluster's session table cannot be read right now; retry").
				With("field", server.HeaderKeySessionID))
			return
		}
		if st != nil && r.Method != http.MethodDelete {
			s.catchUp(r, id, sess, st, next)
		}
		ctx, cancel := context.WithCancel(context.WithValue(r.Context(), checkedSessionKey{}, id))
		defer cancel()
		if r.Method != http.MethodDelete {
			// Ending the session ends what runs in it, its stream included.
			defer context.AfterFunc(sess.ended, cancel)()
		}
		if s.shared != nil && r.Method == http.MethodGet {
			go s.watchStream(ctx, id, holderOf(r))
		}
		if r.Method == http.MethodPost && method != "" && len(rpcID) > 0 {
			rw, done, ok := holdRequestID(sess, w, rpcID)
			if !ok {
				return
			}
			defer done()
			w = rw
		}
		if method == string(mcp.MethodToolsCall) {
			select {
			case sess.calls <- struct{}{}:
				defer func() { <-sess.calls }()
			case <-ctx.Done():
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
		if s.shared != nil && r.Method == http.MethodPost {
			s.record(id, sess, method, bodyOf(r))
		}
	})
}

// sessionNeed reports whether a request must name a session, and its
// JSON-RPC method and id: GET and DELETE always, every POST but initialize,
// except in protocol 2026-07-28, which is stateless.
func sessionNeed(r *http.Request) (need bool, method string, id json.RawMessage) {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return false, "", nil
	}
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		return true, "", nil
	case http.MethodPost:
	default:
		return false, "", nil
	}
	var probe struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(bodyOf(r), &probe) != nil {
		// mcp-go answers a body that is not one JSON-RPC message.
		return false, "", nil
	}
	if mcp.IsModernProtocol(probe.Params.Meta.ProtocolVersion()) {
		return false, "", nil
	}
	return probe.Method != string(mcp.MethodInitialize), probe.Method, probe.ID
}
